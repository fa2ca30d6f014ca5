"""Whole-sandbox limits with cgroup v1 `memory` and `pids`, where the host lets us write them.

rlimits are per process: RLIMIT_AS bounds one process's address space, not the sum over the
processes a repro forks, and tmpfs pages count against nobody. A memory cgroup bounds the whole
sandbox (processes and its /tmp), so a repro that forks and allocates cannot take the host
down: the kernel OOM-kills inside the group instead (seen as SIGKILL, exit 137). A pids cgroup
bounds tasks (threads included) on top of RLIMIT_NPROC.

Groups are created under the caller's own cgroup (read from /proc/self/cgroup), so the sandbox
stays charged to whatever contains the worker (a container's limit still applies). When a
controller is missing or read-only, it is skipped: the rlimits still hold.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
GROUP_PARENT = "scrub-sandbox"


def own_cgroup_dir(controller: str, root: Path = CGROUP_ROOT) -> Path | None:
    """The directory of this process's cgroup for a v1 `controller`, if mounted and writable."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            directory = root / controller / path.lstrip("/")
            return directory if directory.is_dir() and os.access(directory, os.W_OK) else None
    return None


@contextmanager
def sandbox_cgroups(name: str, *, memory_bytes: int | None, pids: int | None) -> Iterator[list[str]]:
    """Create `scrub-sandbox/<name>` groups; yield their `cgroup.procs` files; remove them after.

    The launcher writes its own pid into each file before it execs the sandbox, so every
    process of the sandbox is born inside. On exit, anything still inside is killed.
    """
    wanted = {"memory": {"memory.limit_in_bytes": memory_bytes}, "pids": {"pids.max": pids}}
    created: list[Path] = []
    try:
        for controller, settings in wanted.items():
            base = own_cgroup_dir(controller)
            if base is None or all(value is None for value in settings.values()):
                continue
            group = base / GROUP_PARENT / name
            try:
                _make_group(group)
                for knob, value in settings.items():
                    if value is not None:
                        (group / knob).write_text(str(value))
            except OSError:
                _remove(group)
                continue
            created.append(group)
        yield [str(group / "cgroup.procs") for group in created]
    finally:
        for group in created:
            _remove(group)


def _make_group(group: Path, attempts: int = 3) -> None:
    """mkdir -p, retrying: a finishing sandbox may remove the shared parent in between."""
    for attempt in range(attempts):
        try:
            group.mkdir(parents=True, exist_ok=True)
            return
        except FileNotFoundError:
            if attempt == attempts - 1:
                raise


def _remove(group: Path, wait_s: float = 2.0) -> None:
    """Kill what is left in `group`, then remove it (retrying while tasks finish exiting)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        except OSError:
            pids = []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            group.rmdir()
            _remove_parent_if_empty(group.parent)
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() >= deadline:
                return
            time.sleep(0.02)


def _remove_parent_if_empty(parent: Path) -> None:
    """Leave no trace in the caller's cgroup (its owner may want to remove it)."""
    try:
        parent.rmdir()
    except OSError:
        pass  # still used by a concurrent sandbox, or already gone
