"""The checkout as the sandbox's working directory: bound read-only, any size, with a scratch layer.

A `TreeLayer` says what `/tmp/work` holds inside the sandbox: the host checkout `root`, bound
read-only entry by entry (never copied, so its size is not capped), plus the paths a run
places on top of it:

- `files`: text a run writes (the fuzzed program `repro.py`, a generated test), each a memfd
  copied into the sandbox's /tmp tmpfs;
- `binds`: host paths bound read-only at a path of the checkout (a build's compiled parts
  placed into `torch/`, as PyTorch's `tools/nightly.py` places a nightly's binaries).

bwrap (0.8 here) has no overlay, and a root-owned checkout could not be written by the
sandbox's leased uid through one anyway, so the scratch layer copies the *spine* of each placed
path instead: every directory on the way to a placed path is a fresh directory on /tmp's
tmpfs whose other entries are bound back read-only one by one; everything else is one bind.
For `test/inductor/test_new.py` that is the checkout's top level, `test/` and `test/inductor/`
re-created (their siblings bound), and the new file written. A run can write new files in
those spine directories and nowhere else in the tree (EROFS); a command that must edit the
tree anywhere (a fix agent, a linter) gets a copy instead (`app.engine.fuzz.treework`).

Nothing of the checkout is followed on the host: entries are listed with `lstat` and a link is
re-created as a link (`--symlink`), so `leak -> /proc/self/environ` reaches only the sandbox's
own scrubbed environment. The checkout's `.git` (a worktree's pointer to the host mirror) is
left out.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

WORK = "/tmp/work"


class LayerError(ValueError):
    """A placed path that is not a plain relative path inside the checkout."""


@dataclass(frozen=True)
class TreeLayer:
    """`root` bound at `dest` (read-only), with `files` (rel -> bytes) and `binds` (rel -> host
    path) placed on top. `hidden`: top-level names left out (a worktree's `.git`)."""

    root: Path
    files: Mapping[str, bytes] = field(default_factory=dict)
    binds: Mapping[str, str] = field(default_factory=dict)
    dest: str = WORK
    hidden: tuple[str, ...] = (".git",)

    def placed(self) -> set[str]:
        return {_clean(rel) for rel in (*self.files, *self.binds)}


def _clean(rel: str) -> str:
    path = PurePosixPath(rel)
    if path.is_absolute() or not path.parts or any(p in ("..", ".", "") for p in path.parts):
        raise LayerError(f"not a path inside the checkout: {rel!r}")
    return path.as_posix()


def spine(placed: set[str]) -> set[str]:
    """Every directory on the way to a placed path ("" is the top), as relative paths."""
    dirs = {""}
    for rel in placed:
        parts = PurePosixPath(rel).parts
        dirs |= {"/".join(parts[:i]) for i in range(1, len(parts))}
    return dirs


def _entries(path: Path) -> list[tuple[str, int]]:
    """(name, st_mode) of a host directory's entries, never following a link; [] if it is none."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            return []
        with os.scandir(path) as found:
            return sorted((entry.name, entry.stat(follow_symlinks=False).st_mode) for entry in found)
    except OSError:
        return []


def layer_args(layer: TreeLayer, source: Callable[[str], str] = lambda path: path,
               memfd: Callable[[str, bytes], int] | None = None) -> tuple[list[str], list[int]]:
    """bwrap arguments that build `layer.dest`, and the fds they read (`--file`).

    `source(host_path)`: where bwrap finds a host path (root mode stages paths its uid cannot
    traverse); `memfd(name, content)`: an fd holding `content` (default: a new memfd)."""
    memfd = memfd or _memfd
    placed = layer.placed()
    dirs = spine(placed)
    root = Path(layer.root)
    args: list[str] = []
    fds: list[int] = []

    def dest(rel: str) -> str:
        return layer.dest if not rel else f"{layer.dest}/{rel}"

    def walk(rel: str) -> None:
        args.extend(["--dir", dest(rel)])
        host = root / rel if rel else root
        for name, mode in _entries(host):
            child = f"{rel}/{name}" if rel else name
            if (not rel and name in layer.hidden) or child in placed or child in dirs:
                continue
            if stat.S_ISLNK(mode):
                try:
                    args.extend(["--symlink", os.readlink(host / name), dest(child)])
                except OSError:
                    continue
            elif stat.S_ISDIR(mode) or stat.S_ISREG(mode):
                args.extend(["--ro-bind", source(str(host / name)), dest(child)])
        for name in sorted(d for d in dirs if d and _parent(d) == rel):
            walk(name)

    walk("")
    for rel, host_path in sorted(layer.binds.items()):
        args.extend(["--ro-bind", source(str(host_path)), dest(_clean(rel))])
    for rel, content in sorted(layer.files.items()):
        fd = memfd(rel, content)
        fds.append(fd)
        args.extend(["--file", str(fd), dest(_clean(rel))])
    return args, fds


def _parent(rel: str) -> str:
    return rel.rpartition("/")[0]


def _memfd(name: str, content: bytes) -> int:
    fd = os.memfd_create("scrub-" + name.replace("/", "_")[:200], 0)
    os.write(fd, content)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def tree_bytes(root: Path, hidden: tuple[str, ...] = (".git",)) -> int:
    """Bytes of the regular files under `root` (links not followed; `hidden` top-level names
    left out): what a copy of the checkout takes."""
    total = 0
    for top, dirs, names in os.walk(root):
        if Path(top) == Path(root):
            dirs[:] = [d for d in dirs if d not in hidden]
            names = [n for n in names if n not in hidden]
        for name in names:
            try:
                info = os.lstat(os.path.join(top, name))
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                total += info.st_size
    return total


def materialize(layer: TreeLayer, target: Path) -> None:
    """The layer as a real directory (trusted mode, no sandbox): a copy of the checkout that
    keeps links as links, with the placed files written and the binds linked in."""
    import shutil

    shutil.copytree(layer.root, target, symlinks=True, ignore=lambda d, names: [
        n for n in names if Path(d) == Path(layer.root) and n in layer.hidden])
    for rel, host_path in layer.binds.items():
        path = target / _clean(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif os.path.lexists(path):
            path.unlink()
        path.symlink_to(host_path)
    for rel, content in layer.files.items():
        path = target / _clean(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(path):
            path.unlink()
        path.write_bytes(content)
