"""Helpers shared by the sandbox and fork-server tests (the real sandbox, no mocks)."""

from __future__ import annotations

import functools
import os
import uuid

import pytest

from app.engine.sandbox.runner import Limits, SandboxSpec
from app.engine.sandbox.userns import current_mode
from tests.engine.sandbox.modes import require_mode

def needs_bwrap(test):
    """The real sandbox in this process's mode (root: a uid pool; else user mode): skipped when
    that mode is not claimed, failed under CI=true when it is claimed but missing."""
    @functools.wraps(test)
    def checked(*args, **kwargs):
        require_mode(current_mode())
        return test(*args, **kwargs)
    return checked


def needs_root_mode(test):
    """Root mode only (a leased uid per sandbox, cgroups writable by root)."""
    @functools.wraps(test)
    def checked(*args, **kwargs):
        require_mode("root")
        return test(*args, **kwargs)
    return checked


def sandbox_processes(popen_pid: int) -> int:
    """Processes in the tree under `popen_pid` (itself included), host view."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as handle:
                    ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(name))
    seen, todo = 0, [popen_pid]
    while todo:
        pid = todo.pop()
        seen += 1
        todo += children.get(pid, [])
    return seen


def spec(**limits: int) -> SandboxSpec:
    """A bwrap spec with the test's limits (small by default: tests must stay cheap)."""
    return SandboxSpec(kind="bwrap", limits=Limits(**{"memory_mb": 1024, **limits}))


def marker() -> str:
    """A string unique to one test, passed as an argument so it shows in /proc/*/cmdline."""
    return f"scrub-test-marker-{uuid.uuid4().hex}"


def processes_with(text: str) -> list[int]:
    """Pids whose command line contains `text` (host view, by scanning /proc)."""
    found = []
    needle = text.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                if needle in handle.read():
                    found.append(int(name))
        except OSError:
            continue
    return found


# A repro that leaves a daemon behind: double fork + setsid, the grandchild sleeps on. The
# parent ends only once the daemon says it runs (a pipe, not a sleep: on a loaded machine the
# daemon may not exist yet after any fixed wait, and the test would check nothing).
DAEMON_SOURCE = """
import os, time
ready_r, ready_w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.write(ready_w, b"up")
        time.sleep(600)
    os._exit(0)
os.close(ready_w)
assert os.read(ready_r, 2) == b"up", "the daemon never started"
print("parent done")
"""
