"""An environment directory made once: concurrent provisions of one key wait for each other.

Every kind of environment (a release, a nightly wheel, an overlay of a checkout's Python files)
is a directory under a store root that two workers, or two stages of one worker, may ask for at
the same moment. `made_once` serializes them with an advisory lock file beside the directory:
the first makes it, the others find it complete and reuse it. A directory left half-made by a
killed worker (no completion marker) is removed and made again.
"""

from __future__ import annotations

import fcntl
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusively(root: Path, name: str) -> Iterator[None]:
    """Hold `<root>/.<name>.lock` (made if needed) for the block; released on exit or death."""
    Path(root).mkdir(parents=True, exist_ok=True)
    with open(Path(root) / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def made_once(target: Path, is_complete: Callable[[], bool], make: Callable[[], None]) -> Path:
    """`target`, made by `make()` unless `is_complete()` already; one maker at a time."""
    with exclusively(target.parent, target.name):
        if is_complete():
            return target
        if target.exists():
            shutil.rmtree(target)
        make()
    return target


__all__ = ["exclusively", "made_once"]
