"""Reading and writing files of an untrusted checkout without following its links.

A repository can track a symlink (`leak -> /proc/self/environ`, `tests -> /home/worker`).
The worker runs as a user that can read its own secrets and write its own files, so every
path it opens inside a checkout goes through here: each component is checked with `lstat`
and the last one is opened with `O_NOFOLLOW`. A path that crosses a link, leaves the root or
names something other than a regular file raises `UnsafePath`; only the sandbox, which has
nothing of the worker's to find, ever resolves a repository's links.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath


class UnsafePath(ValueError):
    """A path in an untrusted tree that the worker must not open."""


def _parts(rel: str) -> tuple[str, ...]:
    path = PurePosixPath(rel)
    if path.is_absolute() or not path.parts or any(p in ("..", "") for p in path.parts):
        raise UnsafePath(f"not a path inside the checkout: {rel!r}")
    return tuple(p for p in path.parts if p != ".")


def check_parents(root: Path, rel: str) -> Path:
    """`root/rel` after checking that no directory on the way is a link (missing ones are fine)."""
    parts = _parts(rel)
    current = root
    for part in parts[:-1]:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return root.joinpath(*parts)
        if stat.S_ISLNK(mode) or not stat.S_ISDIR(mode):
            raise UnsafePath(f"{rel!r} goes through {current.relative_to(root)}, which is a link or not a directory")
    return root.joinpath(*parts)


def is_regular_file(root: Path, rel: str) -> bool:
    """Whether `rel` is a regular file reached without any link (a link is never a file here)."""
    try:
        path = check_parents(root, rel)
        return stat.S_ISREG(os.lstat(path).st_mode)
    except (UnsafePath, OSError):
        return False


def is_link(root: Path, rel: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(check_parents(root, rel)).st_mode)
    except (UnsafePath, OSError):
        return False


def read_bytes(root: Path, rel: str, limit: int | None = None) -> bytes:
    """The bytes of a regular file `rel` (at most `limit`), never through a link."""
    path = check_parents(root, rel)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise UnsafePath(f"cannot open {rel!r} without following a link ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise UnsafePath(f"{rel!r} is not a regular file")
        return handle.read() if limit is None else handle.read(limit)


def read_text(root: Path, rel: str, limit: int | None = None) -> str:
    return read_bytes(root, rel, limit).decode(errors="replace")


def write_text(root: Path, rel: str, text: str) -> Path:
    """Write `rel` under `root`, replacing a link at `rel` by a file; never writes through one."""
    path = check_parents(root, rel)
    current = root
    for part in _parts(rel)[:-1]:  # create missing directories one by one, re-checking each
        current = current / part
        try:
            os.mkdir(current)
        except FileExistsError:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                raise UnsafePath(f"{current.relative_to(root)} is a link") from None
    if os.path.lexists(path) and not stat.S_ISREG(os.lstat(path).st_mode):
        if stat.S_ISDIR(os.lstat(path).st_mode):
            raise UnsafePath(f"{rel!r} is a directory")
        os.unlink(path)  # a link (or fifo...) where our file goes: drop it, do not follow it
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    return path
