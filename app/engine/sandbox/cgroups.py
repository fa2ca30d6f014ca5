"""Whole-sandbox limits with a memory and a pids cgroup (v1 or v2, chosen at runtime).

rlimits are per process: RLIMIT_AS bounds one process's address space, not the sum over the
processes a repro forks, and tmpfs pages count against nobody. A memory cgroup bounds the whole
sandbox (processes and its /tmp, /dev/shm), so a repro that forks and allocates cannot take the
host down: the kernel OOM-kills inside the group instead (seen as SIGKILL, exit 137). A pids
cgroup bounds tasks (threads included) on top of RLIMIT_NPROC.

Where the groups go:
- cgroup v1 (`memory` and `pids` hierarchies): `<own group>/scrub-sandbox/<name>` in each, so
  the sandbox stays charged to whatever contains the worker (a container's limit still holds).
- cgroup v2 (one hierarchy, `cgroup.controllers` at its root): a group holding processes may
  not also enable controllers for children (the kernel's "no internal processes" rule), so the
  groups go beside the worker's: `<parent of own group>/scrub-sandbox/<name>`, or under the
  root when the worker sits in the root group. The parent must delegate `memory` and `pids`
  (systemd does for its slices, and for a user's `user@UID.service` subtree).
Root can usually write these. An ordinary user can only when a subtree is delegated to them;
otherwise the sandbox has rlimits only, which is said once in the log.
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger(__name__)
CGROUP_ROOT = Path("/sys/fs/cgroup")
SELF_CGROUP = Path("/proc/self/cgroup")
GROUP_PARENT = "scrub-sandbox"
_OPTIONAL = {"memory.swap.max"}  # only with swap accounting; without it there is nothing to bound
_said: set[str] = set()


def _self_lines(self_cgroup: Path) -> list[str]:
    try:
        return self_cgroup.read_text().splitlines()
    except OSError:
        return []


def is_v2(root: Path = CGROUP_ROOT) -> bool:
    """A unified (v2) hierarchy is mounted at `root` (not a v1 or hybrid layout)."""
    return (root / "cgroup.controllers").is_file()


def own_cgroup_dir(controller: str, root: Path = CGROUP_ROOT, self_cgroup: Path = SELF_CGROUP) -> Path | None:
    """The directory of this process's cgroup for a v1 `controller`, if mounted and writable."""
    for line in _self_lines(self_cgroup):
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            directory = root / controller / path.lstrip("/")
            return directory if directory.is_dir() and os.access(directory, os.W_OK) else None
    return None


def v2_parent_dir(root: Path = CGROUP_ROOT, self_cgroup: Path = SELF_CGROUP) -> Path | None:
    """Where v2 sandbox groups go (`.../scrub-sandbox`'s parent), if it delegates memory + pids
    and is writable; None otherwise."""
    own = next((line[3:] for line in _self_lines(self_cgroup) if line.startswith("0::")), None)
    if own is None:
        return None
    own_dir = root / own.strip().lstrip("/")
    parent = root if own_dir == root else own_dir.parent
    try:
        available = (parent / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    if not {"memory", "pids"} <= set(available) or not os.access(parent, os.W_OK):
        return None
    return parent


def _say_once(key: str, message: str) -> None:
    if key not in _said:
        _said.add(key)
        log.info(message)


def _plan(memory_bytes: int | None, pids: int | None, root: Path, self_cgroup: Path) -> list[tuple[Path, dict]]:
    """(parent of the `name` group, {knob: value}) for each hierarchy to use."""
    if is_v2(root):
        parent = v2_parent_dir(root, self_cgroup)
        if parent is None:
            _say_once("v2", "cgroup v2: no writable group delegating memory and pids; sandboxes are "
                      "bounded by rlimits only (per-process memory, the uid's task count)")
            return []
        return [(parent / GROUP_PARENT, {"memory.max": memory_bytes, "memory.swap.max": 0 if memory_bytes else None,
                                         "pids.max": pids})]
    plan = []
    for controller, knobs in (("memory", {"memory.limit_in_bytes": memory_bytes}), ("pids", {"pids.max": pids})):
        base = own_cgroup_dir(controller, root, self_cgroup)
        if base is None:
            _say_once(f"v1-{controller}", f"cgroup v1: no writable {controller} group; the sandbox's "
                      f"{controller} is bounded by rlimits only")
        elif any(value is not None for value in knobs.values()):
            plan.append((base / GROUP_PARENT, knobs))
    return plan


@contextmanager
def sandbox_cgroups(name: str, *, memory_bytes: int | None, pids: int | None,
                    root: Path = CGROUP_ROOT, self_cgroup: Path = SELF_CGROUP) -> Iterator[list[str]]:
    """Create `scrub-sandbox/<name>` groups; yield their `cgroup.procs` files; remove them after.

    The launcher writes its own pid into each file before it execs the sandbox, so every
    process of the sandbox is born inside. On exit, anything still inside is killed.
    """
    created: list[Path] = []
    try:
        for parent, knobs in _plan(memory_bytes, pids, root, self_cgroup):
            group = parent / name
            try:
                _make_group(group, v2=is_v2(root))
                for knob, value in knobs.items():
                    if value is not None and (knob not in _OPTIONAL or (group / knob).exists()):
                        (group / knob).write_text(str(value))
            except OSError as exc:
                _say_once(f"fail-{parent}", f"cannot set up cgroup {group} ({exc}); rlimits only there")
                _remove(group)
                continue
            created.append(group)
        yield [str(group / "cgroup.procs") for group in created]
    finally:
        for group in created:
            _remove(group)


def _make_group(group: Path, v2: bool, attempts: int = 3) -> None:
    """mkdir -p, retrying: a finishing sandbox may remove the shared parent in between. In v2
    the shared parent must pass memory and pids down to its children."""
    for attempt in range(attempts):
        try:
            group.parent.mkdir(exist_ok=True)
            if v2:
                (group.parent / "cgroup.subtree_control").write_text("+memory +pids")
            group.mkdir(exist_ok=True)
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
        except (OSError, ValueError):
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
        except OSError as exc:
            if exc.errno == errno.ENOTEMPTY or time.monotonic() >= deadline:  # ENOTEMPTY: not a cgroupfs
                return
            time.sleep(0.02)


def _remove_parent_if_empty(parent: Path) -> None:
    """Leave no trace in the caller's cgroup (its owner may want to remove it)."""
    try:
        parent.rmdir()
    except OSError:
        pass  # still used by a concurrent sandbox, or already gone
