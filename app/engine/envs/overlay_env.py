"""A commit's build made from a nightly's: its environment with the commit's Python laid over it.

Between two nightlies, a commit whose changes since the older nightly's source are Python only
(`history.classify`) runs as that nightly's compiled parts plus the commit's own Python files:
what PyTorch's `tools/nightly.py` arranges for a checkout. For a repro (a script, not a
checkout) the same build is an environment: `overlay_env(base, files, root, key)` makes
`<root>/<key>/`, a venv like the base (`--system-site-packages`) whose site-packages is the
base's, hard-linked file by file (a real torch is ~1 GB: nothing is copied unless the two
directories are on different filesystems), with each of `files` written over it (`None`:
removed, as the commit deleted it). Files are replaced, never written through a link, so the
base stays as it was. Checked (`python -c "import sys"`), marked complete last, reused after.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

from app.engine.envs.nightly_env import site_packages
from app.engine.envs.once import made_once
from app.engine.envs.provision import ProvisionError

MARKER = "scrub-overlay.json"


def _safe(rel: str) -> PurePosixPath:
    path = PurePosixPath(rel)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise ProvisionError(f"overlay path {rel!r} is not a relative path inside site-packages")
    return path


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def existing(root: Path, key: str) -> Path | None:
    target = Path(root) / key
    return target if (target / MARKER).is_file() else None


def overlay_env(base: Path, files: dict[str, str | None], root: Path, key: str, *,
                base_python: str = sys.executable, note: dict | None = None) -> Path:
    """The environment of `base` with `files` (site-packages-relative path -> text, or None to
    delete) laid over it, made once as `<root>/<key>/`; its directory."""
    target = Path(root) / key

    def make() -> None:
        subprocess.run([base_python, "-m", "venv", "--without-pip", "--system-site-packages", str(target)],
                       check=True, capture_output=True, timeout=300)
        source, dest = site_packages(Path(base)), site_packages(target)
        shutil.rmtree(dest)
        shutil.copytree(source, dest, symlinks=True, copy_function=_link_or_copy)
        for rel, text in sorted(files.items()):
            path = dest / _safe(rel)
            if path.is_symlink() or path.exists():
                path.unlink()
            for cached in path.parent.glob(f"__pycache__/{path.stem}.*.pyc"):  # the base's bytecode of it
                cached.unlink()
            if text is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
        python = str(target / "bin" / "python")
        check = subprocess.run([python, "-c", "import sys"], capture_output=True, text=True, timeout=60, cwd="/")
        if check.returncode != 0:
            raise ProvisionError(f"the overlay environment {key} does not start: {check.stderr[-400:]}")
        (target / MARKER).write_text(json.dumps({"base": str(base), "files": sorted(files), **(note or {})},
                                                indent=1))

    return made_once(target, lambda: existing(root, key) is not None, make)


__all__ = ["overlay_env", "existing"]
