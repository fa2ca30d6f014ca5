"""Run a command over a copy of a checkout inside the sandbox.

The sandbox (`app.engine.sandbox.runner`) runs one Python file in a private, empty /tmp. A CI
test needs the whole checkout, so `TreeRunner` packs the checkout's files once (tracked and
untracked-but-not-ignored, never `.git`) into a zip that travels inside a small bootstrap
script; in the sandbox the bootstrap unpacks it under /tmp/work, writes the run's extra files
there (`run(..., files=...)`: the fuzzed program of `app.engine.fuzz.treework.ProgramRunner`)
and `exec`s the command there. The untrusted code sees a throwaway copy: it cannot touch the
worktree we commit from.

The worker never follows a link of the checkout: a tracked symlink is packed as a symlink
(its target text, not what it points at) and re-created as one in the sandbox, where it can
only reach what the sandbox holds (`leak -> /proc/self/environ` is the sandbox's scrubbed
environment). Files are read with `O_NOFOLLOW` through `app.engine.git.tree`; a path that
crosses a linked directory is skipped.

A checkout bigger than `max_bytes` is refused with a clear error: that job needs a sandbox
that binds directories (see the report of the CI job's "what is left").
"""

from __future__ import annotations

import base64
import io
import os
import stat
import subprocess
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.engine.git.tree import UnsafePath, check_parents, read_bytes
from app.engine.sandbox.runner import ProcessResult, Sandbox

WORK = "/tmp/work"
DEFAULT_MAX_BYTES = 48 << 20

_BOOTSTRAP = '''\
import base64, io, os, stat, sys, zipfile
with zipfile.ZipFile(io.BytesIO(base64.b64decode(DATA))) as archive:
    for info in archive.infolist():
        dest = os.path.join({work!r}, info.filename)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if stat.S_ISLNK(info.external_attr >> 16):
            os.symlink(archive.read(info).decode(), dest)
        else:
            with open(dest, "wb") as out:
                out.write(archive.read(info))
            os.chmod(dest, (info.external_attr >> 16) & 0o755 or 0o644)
for name, text in FILES.items():
    dest = os.path.join({work!r}, name)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    if os.path.lexists(dest):
        os.remove(dest)  # replace the checkout's file or link, never write through a link
    with open(dest, "w", encoding="utf-8") as out:
        out.write(text)
os.chdir({work!r})
os.execv(sys.executable, [sys.executable] + sys.argv[1:])
'''


class TreeTooLarge(ValueError):
    """The checkout is larger than what may be shipped into the sandbox."""


def tree_files(root: Path) -> list[str]:
    """Repo-relative paths of the files and links a test run needs (git's view; all if no git).

    Nothing is followed: a link is listed as itself, a path under a linked directory is left out.
    """
    proc = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root, capture_output=True, text=True,
    )
    if proc.returncode == 0:
        names = [n for n in proc.stdout.split("\0") if n]
    else:
        names = [str(p.relative_to(root)) for p in root.rglob("*") if ".git" not in p.relative_to(root).parts]
    return sorted(n for n in set(names) if _kind(root, n) is not None)


def _kind(root: Path, name: str) -> str | None:
    """"file", "link", or None (a directory, a device, a path through a link, gone)."""
    try:
        mode = os.lstat(check_parents(root, name)).st_mode
    except (UnsafePath, OSError):
        return None
    return "link" if stat.S_ISLNK(mode) else "file" if stat.S_ISREG(mode) else None


def pack_tree(root: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """A zip of the checkout's files; `TreeTooLarge` past `max_bytes` of input."""
    buffer = io.BytesIO()
    total = 0
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for name in tree_files(root):
            path = root / name
            info = zipfile.ZipInfo(name)
            mode = os.lstat(path).st_mode
            total += os.lstat(path).st_size
            if total > max_bytes:
                raise TreeTooLarge(f"checkout exceeds {max_bytes >> 20} MB; cannot ship it into the sandbox")
            if stat.S_ISLNK(mode):
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
                archive.writestr(info, os.readlink(path))  # the link's text, never its target
                continue
            info.external_attr = (stat.S_IFREG | (mode & 0o755)) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            try:
                archive.writestr(info, read_bytes(root, name))
            except UnsafePath:
                continue  # swapped for a link or a fifo since it was listed
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

    def run(self, argv: Sequence[str], timeout_s: float, files: Mapping[str, str] | None = None) -> ProcessResult:
        """`python *argv` with the checkout as the working directory (untrusted). `files`
        (path relative to the checkout -> text) are written into the copy first, replacing
        the checkout's own: a program to run, without repacking the checkout for it."""
        if not self._script:
            self.repack()
        script = f"FILES = {dict(files or {})!r}\n" + self._script
        return self.sandbox.run(script, timeout_s=timeout_s, argv=list(argv), filename="scrub_boot.py")


def pytest_argv(*targets: str, extra: Sequence[str] = ()) -> list[str]:
    """`-m pytest` arguments for running `targets` quietly with no cache writes."""
    return ["-m", "pytest", "-q", "-rfExX", "-p", "no:cacheprovider", *extra, *targets]
