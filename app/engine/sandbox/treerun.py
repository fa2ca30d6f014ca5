"""Run a command over a copy of a checkout inside the sandbox.

The sandbox (`app.engine.sandbox.runner`) runs one Python file in a private, empty /tmp. A CI
test needs the whole checkout, so `TreeRunner` packs the checkout's files once (tracked and
untracked-but-not-ignored, never `.git`) into a zip that travels inside a small bootstrap
script; in the sandbox the bootstrap unpacks it under /tmp/work and `exec`s the command
there. The untrusted code sees a throwaway copy: it cannot touch the worktree we commit from.

A checkout bigger than `max_bytes` is refused with a clear error: that job needs a sandbox
that binds directories (see the report of the CI job's "what is left").
"""

from __future__ import annotations

import base64
import io
import subprocess
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.engine.sandbox.runner import ProcessResult, Sandbox

WORK = "/tmp/work"
DEFAULT_MAX_BYTES = 48 << 20

_BOOTSTRAP = '''\
import base64, io, os, sys, zipfile
zipfile.ZipFile(io.BytesIO(base64.b64decode(DATA))).extractall({work!r})
os.chdir({work!r})
os.execv(sys.executable, [sys.executable] + sys.argv[1:])
'''


class TreeTooLarge(ValueError):
    """The checkout is larger than what may be shipped into the sandbox."""


def tree_files(root: Path) -> list[str]:
    """Repo-relative paths of the files a test run needs (git's view; all files if no git)."""
    proc = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root, capture_output=True, text=True,
    )
    if proc.returncode == 0:
        names = [n for n in proc.stdout.split("\0") if n]
    else:
        names = [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and ".git" not in p.parts]
    return sorted(n for n in set(names) if (root / n).is_file())


def pack_tree(root: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """A zip of the checkout's files; `TreeTooLarge` past `max_bytes` of input."""
    buffer = io.BytesIO()
    total = 0
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for name in tree_files(root):
            path = root / name
            total += path.stat().st_size
            if total > max_bytes:
                raise TreeTooLarge(f"checkout exceeds {max_bytes >> 20} MB; cannot ship it into the sandbox")
            archive.write(path, name)
    return buffer.getvalue()


@dataclass
class TreeRunner:
    """Runs commands over a checkout in `sandbox`; repack after changing the checkout."""

    sandbox: Sandbox
    root: Path
    max_bytes: int = DEFAULT_MAX_BYTES
    _script: str = field(default="", init=False, repr=False)

    def repack(self) -> None:
        data = base64.b64encode(pack_tree(self.root, self.max_bytes)).decode()
        self._script = f"DATA = {data!r}\n" + _BOOTSTRAP.format(work=WORK)

    def run(self, argv: Sequence[str], timeout_s: float) -> ProcessResult:
        """`python *argv` with the checkout as the working directory (untrusted)."""
        if not self._script:
            self.repack()
        return self.sandbox.run(self._script, timeout_s=timeout_s, argv=list(argv), filename="scrub_boot.py")


def pytest_argv(*targets: str, extra: Sequence[str] = ()) -> list[str]:
    """`-m pytest` arguments for running `targets` quietly with no cache writes."""
    return ["-m", "pytest", "-q", "-rfExX", "-p", "no:cacheprovider", *extra, *targets]
