"""Files only this user may read: the data dir (0700) and the SQLite database (0600).

On a shared machine (an ML box with many accounts) the data dir holds every run's repro,
output and artifacts, the mirrors of the repositories, and the database. Created here, they
are private from the first byte (the mode is given to `mkdir`/`open`, never set afterwards);
found group- or world-readable (made by an older version), they are tightened, if this user
owns them. Nothing here changes the process umask (the sandbox's files keep their modes).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

DIR_MODE, FILE_MODE = 0o700, 0o600


def private_dir(path: Path) -> Path:
    """`path` as a directory only this user can enter (parents are made as usual)."""
    path = Path(path)
    if not path.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            path.mkdir(mode=DIR_MODE)
        except FileExistsError:  # made meanwhile by another process (the worker, a migration)
            pass
    _tighten(path, DIR_MODE)
    return path


def private_file(path: Path) -> Path:
    """`path` as a file only this user can read or write, created empty (0600) when missing."""
    path = Path(path)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE))
    except FileExistsError:
        _tighten(path, FILE_MODE)
    return path


def _tighten(path: Path, mode: int) -> None:
    """Drop group and other bits from `path` (a link the operator configured is followed)
    when this user owns it; someone else's directory is left as it is."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    if info.st_uid != os.geteuid() or not info.st_mode & 0o077:
        return
    os.chmod(path, stat.S_IMODE(info.st_mode) & mode)
