"""One thread hides bugs (#13 pattern 2): repros run with the worker's thread count; only the
minimizer's candidates are pinned, and a repro that passes pinned is re-checked unpinned.

The repro: a parallel torch op in the parent starts libgomp's pool, then `os.fork`; the child's
own parallel op waits forever for a pool that did not survive the fork. On one thread there is
no pool, and it passes."""

from __future__ import annotations

import logging
import os
import re
import sys

import pytest

from app.engine.minimize.runners import sandbox_runners, zygote_for
from app.engine.sandbox.runner import Limits, SandboxSpec, run_sandboxed, sandbox_env
from app.engine.verdict.reproduce import reproduce
from tests.engine.sandbox.modes import require_mode
from tests.services import require_torch

FORK_AFTER_PARALLEL = """
import os
import torch

x = torch.randn(4_000_000)
print("threads", torch.get_num_threads(), float(x.mul(2).sum()) != 0, flush=True)
pid = os.fork()
if pid == 0:
    y = torch.randn(4_000_000)
    print("child", float(y.mul(2).sum()) != 0, flush=True)
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("child exit", os.waitstatus_to_exitcode(status))
"""
HANG_TIMEOUT_S = 20  # the unpinned cold run never ends; the pinned one gets far longer below
# A fork-server candidate starts with torch imported: it reaches its fork in well under a second,
# so this is ample; that it got there before the timeout is checked, not assumed.
WARM_HANG_TIMEOUT_S = 8
needs_cores = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: torch starts no thread pool at all")


def threads_at_fork(output: str) -> int:
    """The thread count the parent printed just before its fork; 0 if it never got there."""
    found = re.search(r"^threads (\d+) True$", output, re.M)
    return int(found.group(1)) if found else 0


def test_threads_are_left_alone_unless_the_spec_pins_them():
    assert not {"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"} & sandbox_env(SandboxSpec()).keys()
    pinned = sandbox_env(SandboxSpec(threads=1))
    assert [pinned[n] for n in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")] == ["1"] * 3


@pytest.mark.torch
@needs_cores
def test_fork_after_parallel_region_hangs_cold_unpinned_and_passes_pinned():
    require_mode("root" if os.geteuid() == 0 else "user")
    require_torch()
    limits = Limits(memory_mb=4096)
    cold = reproduce(FORK_AFTER_PARALLEL, SandboxSpec(limits=limits), timeout_s=HANG_TIMEOUT_S)
    assert cold.outcome == "timeout" and cold.failures == 1, cold.output_tail
    pinned = run_sandboxed(FORK_AFTER_PARALLEL, SandboxSpec(limits=limits, threads=1), timeout_s=180)
    assert pinned.exit_code == 0 and "child exit 0" in pinned.output.text(), pinned.output.text()
    assert "threads 1 " in pinned.output.text()


@pytest.mark.torch
@needs_cores
def test_minimizer_candidates_run_unpinned_when_the_repro_passes_pinned(caplog):
    require_mode("root" if os.geteuid() == 0 else "user")
    require_torch()
    cold, warm, close = sandbox_runners(sys.executable, jobs=1, spec=SandboxSpec(limits=Limits(memory_mb=4096)),
                                        zygote=zygote_for(FORK_AFTER_PARALLEL))
    try:
        with caplog.at_level(logging.INFO, logger="app.engine.minimize.runners"):
            first = warm(FORK_AFTER_PARALLEL, WARM_HANG_TIMEOUT_S)
        assert "passes on one thread" in caplog.text  # pinned, it passed: re-checked unpinned
        assert first.mode == "fork" and first.timed_out, first.output.text()
        assert threads_at_fork(first.output.text()) > 1, first.output.text()  # it hung after the fork
        later = warm(FORK_AFTER_PARALLEL.replace("child exit", "child status"), WARM_HANG_TIMEOUT_S)
        assert later.mode == "fork" and later.timed_out  # the next candidates stay unpinned
        assert threads_at_fork(later.output.text()) > 1, later.output.text()
        seen = warm("import os, torch\nprint(torch.get_num_threads(), os.environ.get('OMP_NUM_THREADS'))", 60)
        assert seen.output.text().split() == [str(len(os.sched_getaffinity(0))), "None"]  # as a cold run
    finally:
        close()
