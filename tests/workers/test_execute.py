"""What a `run_pipeline` task does, called directly (no broker): resume, hand off to a repro
worker as a job and go on with its result, fail clearly."""

from __future__ import annotations

import json

import pytest

from app.db import queries
from app.db.models import Run
from app.pipelines import registry
from app.pipelines.base import Stage, StageResult
from workers.execute import WorkerServices, execute_run
from workers.jobs import ReproJob
from workers.repro import run_job
from workers.results import record_result


def services(database, settings, enqueuer, stages_for=registry.stages_for) -> WorkerServices:
    return WorkerServices(settings, database, enqueuer, github_for=lambda installation: None, stages_for=stages_for)


def new_run(database, **fields) -> Run:
    with database.session() as session:
        run = queries.create_run(session, **{"kind": "selftest", "repo": "o/r", **fields})
        session.commit()
        return run


def reload(database, run_id: int):
    with database.session() as session:
        return queries.run_detail(session, run_id)


def through_repro_worker(enqueuer, settings, svc) -> str:
    """The job sent last, run as a repro worker runs it, its result recorded as a trusted
    worker records it (no broker: `tests/workers/test_integration.py` has the real one)."""
    job, queue = enqueuer.jobs.pop()
    parsed = ReproJob.from_dict(json.loads(json.dumps(job)))  # as it crosses the broker
    assert parsed.queue == queue
    result = run_job(parsed, settings, beat=lambda stage: None, stages_for=svc.stages_for)
    return record_result(json.loads(json.dumps(result.to_dict())), svc)


def test_selftest_hands_off_to_repro_cpu_and_finishes(database, settings, enqueuer):
    run = new_run(database)
    svc = services(database, settings, enqueuer)
    assert execute_run(run.id, svc) == "handed off to repro-cpu"
    assert enqueuer.runs == [] and [q for _, q in enqueuer.jobs] == ["repro-cpu"]
    assert reload(database, run.id).run.queue == "repro-cpu"
    assert through_repro_worker(enqueuer, settings, svc) == "succeeded"
    detail = reload(database, run.id)
    assert [(e.stage, e.status) for e in detail.stages] == [("greet", "done"), ("work", "done"), ("report", "done")]
    assert detail.run.verdict == "selftest passed on repro-cpu"
    assert "hello from run" in {a.name: a.content for a in detail.artifacts}["selftest.md"]


def test_running_twice_does_not_redo_done_stages(database, settings, enqueuer):
    calls = []

    def count(ctx, state):
        calls.append(ctx.run_id)
        return StageResult(summary="counted")

    run = new_run(database)
    svc = services(database, settings, enqueuer, stages_for=lambda kind: [Stage("count", count)])
    assert execute_run(run.id, svc) == "succeeded"
    assert execute_run(run.id, svc) == "already succeeded"  # a duplicate message
    with database.session() as session:  # a redelivery after a crash: the run is still "running"
        stored = session.get(Run, run.id)
        stored.status = "running"
        session.add(stored)
        session.commit()
    assert execute_run(run.id, svc) == "succeeded"
    assert calls == [run.id]
    assert len(reload(database, run.id).stages) == 1


def test_unknown_kind_fails_the_run_with_a_clear_error(database, settings, enqueuer):
    run = new_run(database, kind="nonexistent")
    assert execute_run(run.id, services(database, settings, enqueuer)) == "failed"
    assert "no pipeline for run kind 'nonexistent'" in reload(database, run.id).run.error


def test_missing_pipeline_module_fails_the_run(database, settings, enqueuer, monkeypatch):
    monkeypatch.setitem(registry.PIPELINE_MODULES, "issue", "app.pipelines.not_written_yet")
    run = new_run(database, kind="issue")
    assert execute_run(run.id, services(database, settings, enqueuer)) == "failed"
    assert "app.pipelines.not_written_yet" in reload(database, run.id).run.error


def test_a_stage_error_fails_the_run_with_a_short_message_and_logs_the_traceback(database, settings, enqueuer, caplog):
    run = new_run(database, params={"fail": True})
    svc = services(database, settings, enqueuer)
    execute_run(run.id, svc)
    assert through_repro_worker(enqueuer, settings, svc) == "failed"
    detail = reload(database, run.id)
    assert detail.run.status == "failed" and "selftest asked to fail" in detail.run.error
    # The API serves `error`: one line, no traceback, no server path; the traceback is logged.
    assert "Traceback" not in detail.run.error and "\n" not in detail.run.error
    assert ".py" not in detail.run.error and "/app/" not in detail.run.error
    assert any(r.exc_info for r in caplog.records if "failed" in r.getMessage())  # the repro worker's log
    assert [(e.stage, e.status) for e in detail.stages][-1] == ("work", "failed")


def test_transient_errors_propagate_for_the_task_to_retry(database, settings, enqueuer):
    def offline(ctx, state):
        raise ConnectionError("github unreachable")

    run = new_run(database)
    with pytest.raises(ConnectionError):
        execute_run(run.id, services(database, settings, enqueuer, stages_for=lambda kind: [Stage("x", offline)]))
    assert reload(database, run.id).run.status == "running"


def test_waiting_for_approval_then_resuming(database, settings, enqueuer):
    run = new_run(database, params={"needs_approval": True})
    svc = services(database, settings, enqueuer)
    assert execute_run(run.id, svc) == "awaiting_approval"
    assert execute_run(run.id, svc) == "already awaiting_approval"
    with database.session() as session:
        from app.db.commands import approve

        outcome = approve(session, session.get(Run, run.id), "maintainer")
        session.commit()
    assert outcome.enqueue_on == "default"
    assert execute_run(run.id, svc) == "handed off to repro-cpu"
    stages = [(e.stage, e.status) for e in reload(database, run.id).stages]
    assert stages == [("greet", "waiting"), ("greet", "done")]



def test_github_rate_limits_are_transient_and_404s_are_not():
    from app.github.port import GitHubAPIError
    from workers.execute import is_transient

    assert is_transient(GitHubAPIError(502, "bad gateway")) and is_transient(GitHubAPIError(0, "timeout"))
    assert not is_transient(GitHubAPIError(404, "Not Found")) and not is_transient(ValueError("x"))


def test_runs_a_stage_spawned_are_enqueued_once(database, settings, enqueuer):
    def spawn(ctx, state):
        with database.session() as session:
            child = queries.create_run(session, kind="selftest", repo="o/r", trigger=f"run {ctx.run_id}")
            session.commit()
        return StageResult(output={"spawned_runs": [child.id]}, enqueue=[child.id])

    def later(ctx, state):
        return StageResult()

    stages = [Stage("spawn", spawn), Stage("later", later, queue=lambda state: "repro-cpu")]
    run = new_run(database)
    svc = services(database, settings, enqueuer, stages_for=lambda kind: stages)
    assert execute_run(run.id, svc) == "handed off to repro-cpu"
    assert through_repro_worker(enqueuer, settings, svc) == "succeeded"
    child_id = reload(database, run.id).stages[0].output["spawned_runs"][0]
    assert enqueuer.runs == [(child_id, "default")] and enqueuer.jobs == []


def test_short_error_hides_server_paths_and_keeps_urls():
    from workers.execute import short_error

    exc = FileNotFoundError("[Errno 2] No such file: '/srv/scrub/.scrub/git/worktrees/run-3/x.py'\nmore")
    text = short_error(exc)
    assert text.startswith("FileNotFoundError: [Errno 2] No such file") and "/srv/scrub" not in text
    assert "more" not in text
    assert "https://github.com/o/r" in short_error(ValueError("see https://github.com/o/r/pull/1"))


def test_an_optional_repro_stage_that_failed_is_not_sent_to_the_repro_queue_again(database, settings, enqueuer):
    """The run goes on without a failed optional stage, on the repro worker and after it: the
    trusted side neither sends it back (before: a new job for it each time its result came back,
    forever) nor refuses the stages the job ran after it; a later job does not run it again."""
    calls = []

    def broken(ctx, state):
        calls.append("broken")
        raise RuntimeError("the culprit search broke")

    def probe(ctx, state):
        calls.append("probe")
        return StageResult(summary="probed")

    stages = [Stage("greet", lambda ctx, state: StageResult()),
              Stage("work", lambda ctx, state: StageResult(), queue=lambda state: "repro-cpu"),
              Stage("broken", broken, queue=lambda state: "repro-cpu", optional=True),
              Stage("read", lambda ctx, state: StageResult(summary="read")),
              Stage("probe", probe, queue=lambda state: "repro-cpu"),
              Stage("report", lambda ctx, state: StageResult())]
    run = new_run(database)
    svc = services(database, settings, enqueuer, stages_for=lambda kind: stages)
    assert execute_run(run.id, svc) == "handed off to repro-cpu"
    assert through_repro_worker(enqueuer, settings, svc) == "handed off to repro-cpu"  # `probe`, after `read`
    assert [job["stage"] for job, _ in enqueuer.jobs] == ["probe"]
    assert through_repro_worker(enqueuer, settings, svc) == "succeeded"
    assert calls == ["broken", "probe"] and enqueuer.jobs == []
    statuses = [(e.stage, e.status) for e in reload(database, run.id).stages]
    assert statuses == [("greet", "done"), ("work", "done"), ("broken", "failed"), ("read", "done"),
                        ("probe", "done"), ("report", "done")]
