"""The DB-backed RunContext records what pipelines do, and what is done stays done."""

from __future__ import annotations

from app.db import queries
from app.db.context import DbRunContext
from app.db.models import Run
from app.pipelines.base import Stage, StageResult, run_pipeline


def new_run(database, **fields) -> Run:
    with database.session() as session:
        run = queries.create_run(session, **{"kind": "selftest", "repo": "o/r", **fields})
        session.commit()
        return run


def test_stages_artifacts_status_and_log_are_recorded(database, settings):
    run = new_run(database, params={"x": 1})
    ctx = DbRunContext(database, run, settings)
    assert ctx.params == {"x": 1} and ctx.github is None
    ctx.set_status("running")
    ctx.stage_started("fetch")
    ctx.stage_finished("fetch", "done", "ok", {"n": 3})
    ctx.save_artifact("a.txt", "text", "first")
    ctx.save_artifact("a.txt", "text", "second")  # upsert, not a second row
    ctx.set_status("succeeded", "fine")
    with database.session() as session:
        detail = queries.run_detail(session, run.id)
    assert [(e.stage, e.status, e.output) for e in detail.stages] == [("fetch", "done", {"n": 3})]
    artifacts = {a.name: a.content for a in detail.artifacts}
    assert artifacts["a.txt"] == "second" and "stage fetch: done (ok)" in artifacts["log"]
    assert (detail.run.status, detail.run.verdict) == ("succeeded", "fine")
    assert detail.run.started_at is not None and detail.run.ended_at is not None


def test_github_is_built_only_when_used(database, settings):
    built = []
    ctx = DbRunContext(database, new_run(database), settings, lambda: built.append(1) or "client")
    assert built == []
    assert ctx.github is ctx.github and built == [1]
    assert repr(ctx.github) == "RedactedWrites('client')"  # its writes are redacted


def test_secrets_are_redacted_from_everything_recorded(database, settings, monkeypatch):
    token = "ghs_" + "A1b2C3d4" * 5
    monkeypatch.setenv("SCRUB_EXTRA_API_TOKEN", "operator-api-token-123")
    settings = settings.model_copy(update={"webhook_secret": "hook-secret-value", "github_token": "plain-token-xyz"})
    written = []

    class Port:
        def upsert_comment(self, repo, number, marker, body):
            written.append(body)

    ctx = DbRunContext(database, new_run(database), settings, Port)
    leak = f"env: SCRUB_WEBHOOK_SECRET=hook-secret-value {token} plain-token-xyz operator-api-token-123"
    ctx.stage_started("s")
    ctx.stage_finished("s", "done", leak, {"out": [leak], "n": 1})
    ctx.save_artifact("a.txt", "text", leak)
    ctx.log(leak)
    ctx.set_status("failed", verdict=leak, error=leak)
    ctx.github.upsert_comment("o/r", 1, "<!-- m -->", leak)
    with database.session() as session:
        detail = queries.run_detail(session, ctx.run_id)
    stored = [detail.run.error, detail.run.verdict, detail.stages[0].summary, str(detail.stages[0].output),
              *(a.content for a in detail.artifacts), *written]
    for text in stored:
        for secret in ("hook-secret-value", token, "plain-token-xyz", "operator-api-token-123"):
            assert secret not in text
        assert "[redacted]" in text
    assert detail.stages[0].output["n"] == 1


def test_completed_stages_survive_and_are_not_redone(database, settings):
    calls = []

    def stage(name, fail=False):
        def run(ctx, state):
            calls.append(name)
            if fail and calls.count(name) == 1:
                raise RuntimeError("fails on its first attempt")
            return StageResult(summary=name, output={name: True})

        return Stage(name, run)

    stages = [stage("a"), stage("b", fail=True)]
    run = new_run(database)
    try:
        run_pipeline(stages, DbRunContext(database, run, settings))
    except RuntimeError:
        pass
    result = run_pipeline(stages, DbRunContext(database, run, settings))
    assert calls == ["a", "b", "b"] and result.status == "succeeded"
    with database.session() as session:
        events = [(e.stage, e.status, e.attempt) for e in queries.stage_events(session, run.id)]
    assert events == [("a", "done", 1), ("b", "failed", 1), ("b", "done", 2)]


def test_a_run_learns_its_title_from_the_fetch_stage_once(database, settings):
    with database.session() as session:
        untitled = queries.create_run(session, kind="issue", repo="o/r", issue=1)
        titled = queries.create_run(session, kind="issue", repo="o/r", issue=2, title="from the webhook")
        session.commit()
    for run in (untitled, titled):
        ctx = DbRunContext(database, run, settings)
        ctx.stage_started("fetch")
        ctx.stage_finished("fetch", "done", "", {"issue": {"title": "Crash in matmul", "number": 1}})
    with database.session() as session:
        assert session.get(Run, untitled.id).title == "Crash in matmul"
        assert session.get(Run, titled.id).title == "from the webhook"


def test_a_ci_failure_run_is_titled_by_its_test_and_exception():
    from app.db.signatures import ci_title

    assert ci_title({"failure": {"test": "test_ops.py::test_add", "exception": "AssertionError"}}) == \
        "test_ops.py::test_add: AssertionError"
    assert ci_title({"failure": {"job": "linux / build"}}) == "linux / build"
    assert ci_title({"fingerprint": "abc"}) == "abc"


def test_log_lines_are_appended_rows_not_a_rewritten_artifact(database, settings):
    run = new_run(database)
    ctx = DbRunContext(database, run, settings)
    for i in range(300):
        ctx.log(f"line {i}")
    with database.session() as session:
        rows = queries.run_log(session, run.id)
        stored = queries.find_artifact(session, run.id, "log")
        tail = queries.run_log(session, run.id, tail=2)
    assert [r.line for r in rows] == [f"line {i}" for i in range(300)]
    assert stored is None  # nothing rewritten per line
    assert [r.line for r in tail] == ["line 298", "line 299"]


def test_stage_summaries_come_from_the_stage_events(database, settings):
    ctx = DbRunContext(database, new_run(database), settings)
    stages = [Stage("a", lambda c, s: StageResult(summary="did a", output={"x": 1})),
              Stage("b", lambda c, s: StageResult(summary="not needed", skipped=True))]
    run_pipeline(stages, ctx, any_queue=True)
    summaries = ctx.stage_summaries()
    assert [(s.stage, s.status, s.summary) for s in summaries] == [("a", "done", "did a"), ("b", "skipped", "not needed")]
    assert all(s.duration_s is not None and s.duration_s >= 0 for s in summaries)
    assert ctx.completed_stages() == {"a": {"x": 1}, "b": {}}  # no bookkeeping in outputs
