"""One door to the files of an untrusted checkout: `Checkout`, which never follows its links.

A repository can track a symlink (`leak -> /proc/self/environ`, `tests -> /home/worker`).
The worker runs as a user that can read its own secrets and write its own files, so every
read, write, listing and existence check it makes inside a checkout goes through a
`Checkout`: the path is walked one component at a time from the checkout's root with
`openat(..., O_NOFOLLOW)`, so a link ANYWHERE in the path (a directory on the way or the file
itself) is refused, and so is a path that leaves the root; a write replaces a link at its last
component by a file instead of following it. Only the sandbox, which has nothing of the
worker's to find, ever resolves a repository's links.

A `Checkout` is `os.PathLike` (git, the sandbox's bind and `subprocess` take it as a
directory) but it has no `/`: code cannot build a `Path` into the checkout by accident and
open it past this door. `tests/pipelines/test_checkout_door.py` checks that no stage module
touches files through `Path` or `open`.

The module functions (`read_text(root, rel)`, ...) are the same door for callers that hold a
plain root.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

__all__ = ["Checkout", "UnsafePath", "is_link", "is_regular_file", "read_bytes", "read_text", "write_text"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
MAX_LISTED = 200_000  # entries a listing walks at most (a checkout is finite, but say so)


class UnsafePath(ValueError):
    """A path in an untrusted tree that the worker must not open."""


def _parts(rel: str) -> tuple[str, ...]:
    path = PurePosixPath(str(rel))
    if path.is_absolute() or not path.parts or any(p in ("..", "") for p in path.parts):
        raise UnsafePath(f"not a path inside the checkout: {rel!r}")
    parts = tuple(p for p in path.parts if p != ".")
    if not parts or any("\0" in p for p in parts):
        raise UnsafePath(f"not a path inside the checkout: {rel!r}")
    return parts


class Checkout:
    """The files of a checkout at `root`, opened without following any of its links."""

    __slots__ = ("root",)

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    @classmethod
    def of(cls, root: Checkout | str | os.PathLike[str]) -> Checkout:
        return root if isinstance(root, Checkout) else cls(root)

    def __fspath__(self) -> str:
        return str(self.root)

    def __str__(self) -> str:
        return str(self.root)

    def __repr__(self) -> str:
        return f"Checkout({str(self.root)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Checkout) and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    @property
    def name(self) -> str:
        return self.root.name

    # -- walking ------------------------------------------------------------------------------

    def _open_dir(self, parts: tuple[str, ...], *, create: bool = False) -> int:
        """A descriptor of the directory `parts` (relative to the root), every component opened
        with O_NOFOLLOW from the one before; missing ones are made when `create`."""
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for index, part in enumerate(parts):
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    try:
                        os.mkdir(part, 0o755, dir_fd=fd)
                    except FileExistsError:
                        pass
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                        where = "/".join(parts[:index + 1])
                        raise UnsafePath(f"{where!r} is a link or not a directory") from None
                    raise
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _lstat(self, rel: str) -> os.stat_result | None:
        """What is at `rel` (a link is a link), or None when nothing is or the way is unsafe."""
        try:
            parts = _parts(rel)
            fd = self._open_dir(parts[:-1])
        except (UnsafePath, OSError):
            return None
        try:
            return os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
        except OSError:
            return None
        finally:
            os.close(fd)

    # -- questions ----------------------------------------------------------------------------

    def exists(self, rel: str) -> bool:
        """Whether anything (a link too) is at `rel`, reached without a link on the way."""
        return self._lstat(rel) is not None

    def is_file(self, rel: str) -> bool:
        """Whether `rel` is a regular file reached without any link (a link is never a file)."""
        found = self._lstat(rel)
        return found is not None and stat.S_ISREG(found.st_mode)

    def is_dir(self, rel: str) -> bool:
        found = self._lstat(rel)
        return found is not None and stat.S_ISDIR(found.st_mode)

    def is_link(self, rel: str) -> bool:
        found = self._lstat(rel)
        return found is not None and stat.S_ISLNK(found.st_mode)

    def size(self, rel: str) -> int | None:
        """The size of the regular file `rel`, or None."""
        found = self._lstat(rel)
        return found.st_size if found is not None and stat.S_ISREG(found.st_mode) else None

    # -- reading ------------------------------------------------------------------------------

    def read_bytes(self, rel: str, limit: int | None = None) -> bytes:
        """The bytes of the regular file `rel` (at most `limit`), never through a link."""
        parts = _parts(rel)
        try:
            dir_fd = self._open_dir(parts[:-1])
        except FileNotFoundError:
            raise UnsafePath(f"{rel!r} does not exist") from None
        try:
            fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
        except OSError as exc:
            raise UnsafePath(f"cannot open {rel!r} without following a link ({exc.strerror})") from None
        finally:
            os.close(dir_fd)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise UnsafePath(f"{rel!r} is not a regular file")
            return handle.read() if limit is None else handle.read(limit)

    def read_text(self, rel: str, limit: int | None = None) -> str:
        return self.read_bytes(rel, limit).decode(errors="replace")

    def listdir(self, rel: str = ".") -> list[str]:
        """The names in the directory `rel` (sorted), reached without a link."""
        parts = () if str(rel) in (".", "") else _parts(rel)
        fd = self._open_dir(parts)
        try:
            return sorted(os.listdir(fd))
        finally:
            os.close(fd)

    def files(self, top: str = ".", *, suffix: str = "") -> Iterator[str]:
        """Regular files under `top` (root-relative, sorted per directory), never entering a
        link; `.git` is left out. Nothing when `top` is missing or unsafe."""
        start = () if str(top) in (".", "") else _parts(top)
        pending = [start]
        seen = 0
        while pending:
            parts = pending.pop()
            try:
                fd = self._open_dir(parts)
            except (UnsafePath, OSError):
                continue
            try:
                with os.scandir(fd) as entries:
                    listed = sorted((e.name, e.stat(follow_symlinks=False).st_mode) for e in entries)
            finally:
                os.close(fd)
            for name, mode in listed:
                seen += 1
                if seen > MAX_LISTED:
                    return
                if stat.S_ISDIR(mode) and name != ".git":
                    pending.append((*parts, name))
                elif stat.S_ISREG(mode) and name.endswith(suffix):
                    yield "/".join((*parts, name))

    # -- writing ------------------------------------------------------------------------------

    def write_bytes(self, rel: str, data: bytes) -> None:
        """Write `rel`, making missing directories; a link at `rel` is replaced by the file,
        a link on the way is refused (`UnsafePath`)."""
        parts = _parts(rel)
        if parts[0] == ".git":
            raise UnsafePath(f"{rel!r} is inside .git")
        dir_fd = self._open_dir(parts[:-1], create=True)
        try:
            name = parts[-1]
            try:
                mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
            except FileNotFoundError:
                mode = None
            if mode is not None and stat.S_ISDIR(mode):
                raise UnsafePath(f"{rel!r} is a directory")
            if mode is not None and not stat.S_ISREG(mode):
                os.unlink(name, dir_fd=dir_fd)  # a link (or fifo...) where our file goes: drop it
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                         dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafePath(f"{rel!r} became a link") from None
            raise
        finally:
            os.close(dir_fd)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)

    def write_text(self, rel: str, text: str) -> None:
        self.write_bytes(rel, text.encode())

    def remove(self, rel: str) -> bool:
        """Remove the file or link at `rel` (never what a link points to); whether one was there."""
        parts = _parts(rel)
        try:
            dir_fd = self._open_dir(parts[:-1])
        except FileNotFoundError:
            return False
        try:
            mode = os.stat(parts[-1], dir_fd=dir_fd, follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode):
                raise UnsafePath(f"{rel!r} is a directory")
            os.unlink(parts[-1], dir_fd=dir_fd)
            return True
        except FileNotFoundError:
            return False
        finally:
            os.close(dir_fd)


# The same door for callers holding a root (a `Path`, or a `Checkout`).

def is_regular_file(root: Checkout | Path, rel: str) -> bool:
    return Checkout.of(root).is_file(rel)


def is_link(root: Checkout | Path, rel: str) -> bool:
    return Checkout.of(root).is_link(rel)


def read_bytes(root: Checkout | Path, rel: str, limit: int | None = None) -> bytes:
    return Checkout.of(root).read_bytes(rel, limit)


def read_text(root: Checkout | Path, rel: str, limit: int | None = None) -> str:
    return Checkout.of(root).read_text(rel, limit)


def write_text(root: Checkout | Path, rel: str, text: str) -> Path:
    """Write `rel` under `root`, replacing a link at `rel` by a file; never writes through one."""
    checkout = Checkout.of(root)
    checkout.write_text(rel, text)
    return checkout.root.joinpath(*_parts(rel))
