"""`scrub demo`: the shipped examples run offline and land on the status page's database."""

from __future__ import annotations

import json

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

    with TestClient(create_app(Settings())) as client:
        index = client.get("/").text
        assert "example-org/example-ml" in index
        issue_page = client.get(f"/runs/{issue_run['run_id']}").text
        assert "IndexError" in issue_page and "index out of range" in issue_page
        ci_page = client.get(f"/runs/{ci_run['run_id']}").text
        assert "test_conv_head_shapes" in ci_page
