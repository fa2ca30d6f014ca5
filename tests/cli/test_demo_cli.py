"""`scrub demo`: the shipped examples run offline and land on the status page's database."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli.main import app
from app.settings import Settings, reset_settings_cache
from tests.engine.sandbox.helpers import needs_bwrap


def test_demo_needs_its_examples(tmp_path, monkeypatch):
    monkeypatch.setenv("SCRUB_DATA_DIR", str(tmp_path / "data"))
    reset_settings_cache()
    result = CliRunner().invoke(app, ["demo", "--examples", str(tmp_path)])
    assert result.exit_code == 2 and "issue.json is missing" in result.stderr


def test_demo_refuses_a_saved_issue_that_is_not_one(tmp_path, monkeypatch):
    monkeypatch.setenv("SCRUB_DATA_DIR", str(tmp_path / "data"))
    reset_settings_cache()
    (tmp_path / "issue.json").write_text('{"issue": {"title": "t", "body": "b"}}')
    (tmp_path / "ci.log").write_text("FAILED test_x.py::test_y\n")
    result = CliRunner().invoke(app, ["demo", "--examples", str(tmp_path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"cannot read {tmp_path / 'issue.json'}" in result.stderr
    assert 'needs a "number" or an "html_url"' in result.stderr


@needs_bwrap
@pytest.mark.torch
def test_demo_records_both_runs_for_the_status_page(tmp_path, monkeypatch):
    monkeypatch.setenv("SCRUB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SCRUB_SANDBOX", "bwrap")
    monkeypatch.delenv("SCRUB_DATABASE_URL", raising=False)
    monkeypatch.delenv("SCRUB_ENVIRONMENTS", raising=False)
    reset_settings_cache()
    result = CliRunner().invoke(app, ["demo", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    issue_run, ci_run = out["runs"]
    assert (issue_run["kind"], issue_run["status"], issue_run["verdict"]) == ("issue", "succeeded", "reproduces")
    assert (ci_run["kind"], ci_run["status"]) == ("ci_ingest", "succeeded") and ci_run["verdict"].startswith("2 failures")
    assert out["comment"].startswith("This issue still reproduces on PyTorch ")

    from app.api import create_app

    with TestClient(create_app(Settings(), local_token="printed"), base_url="http://127.0.0.1:8000") as client:
        assert "example-org/example-ml" not in client.get("/").text  # anyone on the machine, without the token
        client.get("/login?token=printed")  # the URL `scrub serve` prints
        index = client.get("/").text
        assert "example-org/example-ml" in index
        issue_page = client.get(f"/runs/{issue_run['run_id']}").text
        assert "IndexError" in issue_page and "index out of range" in issue_page
        ci_page = client.get(f"/runs/{ci_run['run_id']}").text
        assert "test_conv_head_shapes" in ci_page


def _demo_env(tmp_path, monkeypatch):
    monkeypatch.setenv("SCRUB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SCRUB_SANDBOX", "bwrap")
    monkeypatch.delenv("SCRUB_DATABASE_URL", raising=False)
    reset_settings_cache()


def _runs(tmp_path):
    from sqlmodel import select

    from app.db.models import Run
    from app.db.session import Database

    database = Database(Settings(data_dir=tmp_path / "data").resolved_database_url)
    try:
        with database.session() as session:
            return [(run.kind, run.status, run.error or "") for run in session.exec(select(Run).order_by(Run.id))]
    finally:
        database.dispose()


@needs_bwrap
def test_a_demo_that_crashes_leaves_its_run_failed_with_the_reason_and_the_next_demo_runs(tmp_path, monkeypatch):
    """It used to leave the run `running` (stranded for an hour) and the next `scrub demo` died
    with a 98-line `UNIQUE constraint failed: run.active_key` traceback."""
    import app.pipelines.base as base

    _demo_env(tmp_path, monkeypatch)

    def crash(stages, ctx, **kwargs):
        ctx.stage_started("fetch")
        raise KeyboardInterrupt  # Ctrl-C, or anything that escapes the pipeline

    monkeypatch.setattr(base, "run_pipeline", crash)
    crashed = CliRunner().invoke(app, ["demo"])
    assert crashed.exit_code != 0 and "Traceback" not in crashed.output
    [(kind, status, error)] = _runs(tmp_path)
    assert (kind, status) == ("issue", "failed") and "scrub demo stopped" in error and "KeyboardInterrupt" in error

    def finish(stages, ctx, **kwargs):
        ctx.set_status("succeeded", verdict="reproduces")
        return SimpleNamespace(status="succeeded", verdict="reproduces")

    monkeypatch.setattr(base, "run_pipeline", finish)
    again = CliRunner().invoke(app, ["demo"])
    assert again.exit_code == 0, again.output
    assert "UNIQUE" not in again.output and "Traceback" not in again.output


@needs_bwrap
def test_a_run_left_running_by_a_demo_killed_outright_is_failed_before_the_next_demo(tmp_path, monkeypatch):
    from app.db import leases, queries
    from app.db.migrate import upgrade
    from app.db.session import Database
    from tests.db.test_leases import dead_pid

    _demo_env(tmp_path, monkeypatch)
    settings = Settings(data_dir=tmp_path / "data")
    settings.ensure_data_dir()
    upgrade(settings.resolved_database_url)
    database = Database(settings.resolved_database_url)
    with database.session() as session:
        run = queries.create_run(session, kind="issue", repo="example-org/example-ml", issue=4242, trigger="scrub demo")
        session.commit()
    assert leases.claim(database, run.id, f"{leases.LOCAL_OWNER}{leases.socket.gethostname()}:{dead_pid()}", 600)
    database.dispose()  # SIGKILL: no cleanup ran, and the lease looks alive for ten minutes

    import app.pipelines.base as base

    monkeypatch.setattr(base, "run_pipeline", lambda stages, ctx, **kwargs: SimpleNamespace(status="succeeded", verdict="x"))
    result = CliRunner().invoke(app, ["demo"])
    assert "UNIQUE" not in result.output and "Traceback" not in result.output, result.output
    first = _runs(tmp_path)[0]
    assert first[1] == "failed" and "stopped before it finished" in first[2]


@needs_bwrap
def test_full_adds_the_training_script_that_the_pipeline_minimizes(tmp_path, monkeypatch):
    """`--full` records a third issue run: the 24-line training script of issue-training.json
    (the stages are stubbed here; the real pipeline minimizes it to 3 lines in about a minute)."""
    import app.pipelines.base as base

    _demo_env(tmp_path, monkeypatch)
    seen = []

    def record(stages, ctx, **kwargs):
        seen.append(ctx.params.get("issue"))
        ctx.set_status("succeeded", verdict="reproduces")
        return SimpleNamespace(status="succeeded", verdict="reproduces")

    monkeypatch.setattr(base, "run_pipeline", record)
    result = CliRunner().invoke(app, ["demo", "--full", "--json"])
    assert result.exit_code == 0, result.output
    assert [run["kind"] for run in json.loads(result.stdout)["runs"]] == ["issue", "ci_ingest", "issue"]
    assert seen == [4242, None, 4243] and "3/3 issue" in result.stderr
    from app.cli.demo import EXAMPLES, FULL_EXAMPLE

    body = json.loads((EXAMPLES / FULL_EXAMPLE).read_text())["issue"]["body"]
    script = body.split("```python\n")[1].split("```")[0]
    code = [line for line in script.splitlines() if line.strip() and not line.startswith(("import", "from"))]
    assert len(code) > 20  # longer than "already minimal": the minimize stage runs
