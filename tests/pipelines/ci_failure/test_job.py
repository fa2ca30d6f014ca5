"""The CI job's identity and routing: what the job is about, its branch, the queue it needs."""

from __future__ import annotations

import pytest

from app.pipelines.base import CPU_QUEUE, GPU_QUEUE
from app.pipelines.ci_failure.job import CIJob
from app.pipelines.ci_failure.state import CIState, job_of, repro_queue


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
