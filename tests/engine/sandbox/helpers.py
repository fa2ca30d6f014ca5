"""Helpers shared by the sandbox and fork-server tests (the real sandbox, no mocks)."""

from __future__ import annotations

import os
import shutil
import uuid

import pytest

from app.engine.sandbox.runner import Limits, SandboxSpec

needs_bwrap = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("bwrap") is None or shutil.which("setpriv") is None,
    reason="the real sandbox needs root (to switch to a sandbox uid), bwrap and setpriv",
)


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


# A repro that leaves a daemon behind: double fork + setsid, the grandchild sleeps on.
DAEMON_SOURCE = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(600)
    os._exit(0)
time.sleep(0.3)
print("parent done")
"""
