"""Unprivileged host uids for sandboxes, one per concurrent sandbox, and the processes they own.

RLIMIT_NPROC counts every process of a real uid, so two sandboxes sharing a uid share a
process budget, and a uid shared with anything else makes the limit meaningless. Each sandbox
therefore leases its own uid from a reserved range. Leases are `flock`s on one file per uid
under a root-only directory, so worker processes on one machine never hand out the same uid,
and a crashed worker's leases are released by the kernel.

Because a leased uid runs nothing but that sandbox, "is anything left behind?" has an exact
answer: any process of that uid after the run is a leftover, and is killed.
"""

from __future__ import annotations

import errno
import fcntl
import os
import pwd
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DEFAULT_UID_BASE = 420_000
DEFAULT_UID_COUNT = 512


class UidPoolExhausted(RuntimeError):
    """Every uid of the pool is leased."""


class UidPool:
    """Leases uids `base .. base+count-1`; lock files live in `lock_dir` (created 0700)."""

    def __init__(self, lock_dir: Path, base: int = DEFAULT_UID_BASE, count: int = DEFAULT_UID_COUNT):
        self.lock_dir = Path(lock_dir)
        self.base = base
        self.count = count
        self._mutex = threading.Lock()
        self._next = 0

    @contextmanager
    def lease(self) -> Iterator[int]:
        """Hold one free uid for the duration of the `with` block; no process of it survives."""
        uid, fd = self._acquire()
        try:
            kill_processes_of_uid(uid)  # a previous holder's leftovers, if it crashed
            yield uid
        finally:
            kill_processes_of_uid(uid)
            os.close(fd)  # releases the flock

    def _acquire(self) -> tuple[int, int]:
        self.lock_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        with self._mutex:
            for step in range(self.count):
                offset = (self._next + step) % self.count
                uid = self.base + offset
                if _has_account(uid):
                    continue  # a real account: its processes are not ours to count or kill
                fd = os.open(self.lock_dir / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError as exc:
                    os.close(fd)
                    if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                        continue
                    raise
                self._next = offset + 1
                return uid, fd
        raise UidPoolExhausted(f"all {self.count} sandbox uids from {self.base} are leased or belong to accounts")


def _has_account(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


def _process_status() -> list[tuple[int, dict[str, str]]]:
    """(pid, fields of /proc/PID/status) of every process visible now."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", encoding="ascii", errors="replace") as status:
                found.append((int(entry.name), dict(line.split(":", 1) for line in status if ":" in line)))
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return found


def _uid_of(fields: dict[str, str]) -> int:
    return int(fields.get("Uid", "-1 ").split()[0])


def processes_of_uid(uid: int) -> list[int]:
    """Live (non-zombie) pids, host view, whose real uid is `uid`, by scanning /proc."""
    return [pid for pid, fields in _process_status()
            if _uid_of(fields) == uid and fields.get("State", "").split()[:1] not in (["Z"], ["X"])]


def tasks_of_uid(uid: int) -> int:
    """How many tasks (threads included, zombies too) `uid` has: what RLIMIT_NPROC counts."""
    return sum(int(fields.get("Threads", "1").strip() or 1) for _, fields in _process_status() if _uid_of(fields) == uid)


def kill_processes_of_uid(uid: int, grace_s: float = 0.0, rounds: int = 5) -> int:
    """SIGKILL every process of `uid` still alive after `grace_s`; return how many were killed.

    The grace lets a sandbox whose init just died finish its own teardown (the kernel kills
    the rest of its pid namespace) so only true leftovers are counted. Scans repeat because a
    fork can race a scan.
    """
    deadline = time.monotonic() + grace_s
    while processes_of_uid(uid) and time.monotonic() < deadline:
        time.sleep(0.02)
    killed = 0
    for _ in range(rounds):
        pids = processes_of_uid(uid)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
    return killed
