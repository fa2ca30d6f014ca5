"""A trusted worker records a repro job's result only for the run that waits on that very job,
and only the stages the pipeline itself sends to that queue: a repro host (which may run
hostile code) can finish its own run's repro stages, nothing else."""

from __future__ import annotations

import time

import pytest

from app.db import queries
from app.db.commands import cancel
from app.db.models import Run
from app.pipelines import registry
from workers.execute import WorkerServices, execute_run
from workers.jobs import ReproResult, StageRecord
from workers.results import ResultRefused, check_records, record_result


def services(database, settings, enqueuer) -> WorkerServices:
    return WorkerServices(settings, database, enqueuer, github_for=lambda installation: None,
                          stages_for=registry.stages_for)


def handed_off(database, settings, enqueuer) -> tuple[int, str, WorkerServices]:
    with database.session() as session:
        run = queries.create_run(session, kind="selftest", repo="o/r", trigger="test")
        session.commit()
    svc = services(database, settings, enqueuer)
    assert execute_run(run.id, svc) == "handed off to repro-cpu"
    job, queue = enqueuer.jobs[-1]
    assert (job["run_id"], job["stage"], queue, job["clone_url"]) == (run.id, "work", "repro-cpu", None)
    return run.id, job["job_id"], svc


def work(output=None, stage="work") -> StageRecord:
    now = time.time()
    return StageRecord(stage, "done", "artifact saved", output if output is not None else {"worked_on": "repro-cpu"},
                       now - 1, now)


def stored(database, run_id: int):
    with database.session() as session:
        return queries.run_detail(session, run_id)


def test_the_result_of_the_job_the_run_waits_on_is_recorded_and_the_run_goes_on(database, settings, enqueuer):
    run_id, job_id, svc = handed_off(database, settings, enqueuer)
    result = ReproResult(job_id, run_id, [work()], [("selftest.md", "markdown", "# hi")], ["ran on the repro host"])
    assert record_result(result.to_dict(), svc) == "succeeded"
    detail = stored(database, run_id)
    assert [(e.stage, e.status) for e in detail.stages] == [("greet", "done"), ("work", "done"), ("report", "done")]
    assert round((detail.stages[1].ended_at - detail.stages[1].started_at).total_seconds()) == 1  # the job's times
    assert detail.run.lease_owner is None and detail.run.verdict == "selftest passed on repro-cpu"
    assert detail.run.queue == "default"  # back on the trusted side
    # The same result again (a redelivery) changes nothing.
    assert record_result(result.to_dict(), svc) == "run gone or finished: result dropped"


def test_a_result_for_another_job_or_run_or_a_cancelled_run_is_dropped(database, settings, enqueuer):
    run_id, job_id, svc = handed_off(database, settings, enqueuer)
    assert record_result(ReproResult("not-the-job", run_id, [work()]).to_dict(), svc) == "stale result dropped"
    assert record_result(ReproResult(job_id, run_id + 99, [work()]).to_dict(), svc).endswith("dropped")
    with database.session() as session:
        cancel(session, session.get(Run, run_id), "maintainer")
        session.commit()
    assert record_result(ReproResult(job_id, run_id, [work()]).to_dict(), svc).endswith("dropped")
    assert [e.stage for e in stored(database, run_id).stages] == ["greet"]


def test_stages_the_pipeline_keeps_on_the_trusted_side_are_refused(database, settings, enqueuer):
    run_id, job_id, svc = handed_off(database, settings, enqueuer)
    forged = [work(), work({"verdict": "fixed"}, stage="report")]  # `report` runs on default
    assert record_result(ReproResult(job_id, run_id, forged).to_dict(), svc) == "failed"
    detail = stored(database, run_id)
    assert "refused" in detail.run.error and "'report' does not run on repro-cpu" in detail.run.error
    assert [e.stage for e in detail.stages] == ["greet"]  # nothing of it was stored


def test_a_stage_out_of_its_order_is_refused(database, settings, enqueuer):
    run_id, job_id, svc = handed_off(database, settings, enqueuer)
    assert record_result(ReproResult(job_id, run_id, [work(stage="report")]).to_dict(), svc) == "failed"
    assert "not the pipeline's next stage" in stored(database, run_id).run.error


def test_an_output_its_state_class_does_not_declare_is_refused():
    issue = registry.stages_for("issue")
    done = {name: {} for name in ("fetch", "select", "triage", "review")}
    check_records(issue, done, "repro-cpu", [work({"verdict": "reproduces"}, stage="reproduce")])
    with pytest.raises(ResultRefused, match="bogus"):
        check_records(issue, done, "repro-cpu", [work({"bogus": 1}, stage="reproduce")])
    with pytest.raises(ResultRefused, match="does not run on repro-gpu"):
        check_records(issue, done, "repro-gpu", [work({"verdict": "reproduces"}, stage="reproduce")])


def test_a_job_that_ran_nothing_fails_the_run_instead_of_bouncing(database, settings, enqueuer):
    run_id, job_id, svc = handed_off(database, settings, enqueuer)
    assert record_result(ReproResult(job_id, run_id, []).to_dict(), svc) == "failed"
    assert "ran no stage" in stored(database, run_id).run.error and len(enqueuer.jobs) == 1


def test_a_transient_failure_sends_a_new_job_and_a_lasting_one_fails_the_run(database, settings, enqueuer):
    run_id, job_id, svc = handed_off(database, settings, enqueuer)
    failed = StageRecord("work", "failed", "ConnectionError: reset", {}, time.time() - 1, time.time())
    result = ReproResult(job_id, run_id, [failed], outcome="failed", error="ConnectionError: reset", transient=True)
    assert record_result(result.to_dict(), svc) == "handed off to repro-cpu"
    again, queue = enqueuer.jobs[-1]
    assert again["job_id"] != job_id and again["retries"] == 1 and queue == "repro-cpu"
    lasting = ReproResult(again["job_id"], run_id, [failed], outcome="failed", error="ValueError: bad repro")
    assert record_result(lasting.to_dict(), svc) == "failed"
    assert stored(database, run_id).run.error == "ValueError: bad repro"
