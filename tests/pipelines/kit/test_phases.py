"""The CI job's shared parts: the phase clock, halting, queue routing, the job's identity."""

from __future__ import annotations

import time

import pytest

from app.pipelines.base import CPU_QUEUE, GPU_QUEUE
from app.pipelines.ci.job import CIJob, Halt, halt, halted, job_of, phase_clock, repro_queue
from app.pipelines.ci.state import CIState
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings


def _ctx(tmp_path, **settings):
    return MemoryRunContext(settings=Settings(data_dir=tmp_path, **settings))


def test_a_phase_clock_counts_from_the_start_an_earlier_stage_stored(tmp_path):
    started = time.time() - 50
    clock = phase_clock(_ctx(tmp_path, phase_reproduce_s=60), CIState(phase_reproduce_started=started), "reproduce")
    assert clock.started == started and 0 < clock.remaining_s <= 10
    assert clock.state() == {"phase_reproduce_started": started}


def test_a_phase_clock_past_its_limit_is_expired_and_says_where(tmp_path):
    clock = phase_clock(_ctx(tmp_path, phase_fix_s=5), CIState(phase_fix_started=time.time() - 6), "fix")
    assert clock.expired
    assert clock.exceeded("fix", "stopped") == {"phase": "fix", "stage": "fix",
                                                "reason": "the fix phase passed its 5 s limit during fix (stopped)"}


def test_a_phase_not_started_yet_starts_now(tmp_path):
    before = time.time()
    clock = phase_clock(_ctx(tmp_path), CIState(), "pr")
    assert clock.started >= before and not clock.expired


def test_halt_records_a_typed_halt_and_later_stages_skip_with_its_reason():
    result = halt("checkout failed", "checkout failed: no such commit", status="Failed", extra={"commit": "x"})
    assert result.output == {"halt": Halt("checkout failed: no such commit", "Failed"), "commit": "x"}
    skip = halted(CIState(halt=result.output["halt"]))
    assert skip.skipped and skip.summary == "skipped: checkout failed: no such commit"
    assert halted(CIState()) is None


def test_job_of_refuses_a_state_whose_job_stage_has_not_run():
    with pytest.raises(RuntimeError, match="no job"):
        job_of(CIState())
    assert job_of(CIState(job=CIJob(repo="o/r"))).repo == "o/r"


@pytest.mark.parametrize(("job", "queue"), [
    (None, CPU_QUEUE),
    (CIJob(repo="o/r", test="test/test_nn.py::test_conv"), CPU_QUEUE),
    (CIJob(repo="o/r", test="test/test_nn.py::test_conv", job_name="linux-cuda12.1 / test"), GPU_QUEUE),
    (CIJob(repo="o/r", test="t.py::x", message="NCCL error in: all_reduce"), GPU_QUEUE),
])
def test_the_repro_queue_follows_what_the_failure_names(job, queue):
    assert repro_queue(CIState(job=job)) == queue


def test_the_branch_is_named_after_the_signature_or_a_digest_of_the_failure():
    assert CIJob(repo="o/r", signature="a" * 64).branch == "scrub/" + "a" * 12
    one, two = CIJob(repo="o/r", test="t::a"), CIJob(repo="o/r", test="t::b")
    assert one.branch != two.branch and one.branch == CIJob(repo="o/r", test="t::a").branch
