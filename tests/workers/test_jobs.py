"""The trust split's messages: what crosses the broker is checked on the way in."""

from __future__ import annotations

import json

import pytest

from workers.jobs import (
    MAX_LOG_LINES,
    MAX_RESULT_BYTES,
    Beat,
    DoneStage,
    ReproJob,
    ReproResult,
    StageRecord,
    bounded,
)


def crossed(message: dict) -> dict:
    return json.loads(json.dumps(message))


def test_a_job_and_a_result_survive_the_broker():
    job = ReproJob("j1", 7, "selftest", "repro-cpu", "work", {"repo": "o/r"}, 3,
                   [DoneStage("greet", "done", "hello", {"greeting": "hi"}, 0.5)], repo="o/r",
                   clone_url="https://github.com/o/r.git", lease_s=60.0)
    assert ReproJob.from_dict(crossed(job.to_dict())) == job
    result = ReproResult("j1", 7, [StageRecord("work", "done", "ok", {"worked_on": "repro-cpu"}, 1.0, 2.0)],
                         [("selftest.md", "markdown", "# hi")], ["a line"], "handoff")
    assert ReproResult.from_dict(crossed(result.to_dict())) == result
    assert Beat.from_dict(crossed(Beat("j1", 7, "work", 60.0).to_dict())) == Beat("j1", 7, "work", 60.0)


@pytest.mark.parametrize("change", [
    {"outcome": "take over"},  # not an outcome
    {"outcome": "end", "status": "running"},  # a job ends a run only as succeeded, failed or skipped
    {"artifacts": [["name", "kind"]]},
    {"log": ["x"] * (MAX_LOG_LINES + 1)},
    {"stages": [{"stage": "work"}]},  # a record without its fields
    {"owner": "me"},  # a field the protocol does not have
])
def test_a_result_that_is_not_one_is_refused(change):
    message = {**ReproResult("j1", 7).to_dict(), **change}
    with pytest.raises((TypeError, ValueError)):
        ReproResult.from_dict(message)


def test_an_oversized_result_becomes_a_failure_that_says_why():
    big = ReproResult("j1", 7, artifacts=[("big.txt", "text", "x" * (MAX_RESULT_BYTES + 1))], retries=2)
    with pytest.raises(ValueError, match="MB"):
        ReproResult.from_dict(big.to_dict())
    sent = bounded(big)
    assert (sent.outcome, sent.artifacts, sent.retries) == ("failed", [], 2) and "over 16 MB" in sent.error
    small = ReproResult("j1", 7, log=["fine"])
    assert bounded(small) is small
