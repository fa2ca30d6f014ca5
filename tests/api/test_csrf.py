"""Local mode (no OAuth): no login, but a page on another origin still cannot press a button."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from app.db import queries
from app.db.models import Run
from app.settings import Settings
from tests.foundation import migrated_database
from workers.enqueue import RecordingEnqueuer

LOCAL = "http://127.0.0.1:8000"


@pytest.fixture
def local(tmp_path):
    settings = Settings(data_dir=tmp_path / "data")
    settings.ensure_data_dir()
    database = migrated_database(settings.resolved_database_url)
    enqueuer = RecordingEnqueuer()
    from app.api import create_app

    with TestClient(create_app(settings, enqueuer=enqueuer), base_url=LOCAL) as client:
        yield client, database, enqueuer
    database.dispose()


def waiting_run(database) -> Run:
    with database.session() as session:
        run = queries.create_run(session, kind="issue", repo="o/r", issue=1, status="awaiting_approval")
        session.commit()
        return run


def status(database, run_id: int) -> str:
    with database.session() as session:
        return session.get(Run, run_id).status


def test_a_form_on_another_origin_cannot_approve(local):
    client, database, enqueuer = local
    run = waiting_run(database)
    for origin in ("https://evil.example", "null"):
        answer = client.post(f"/api/v1/runs/{run.id}/approve", headers={"Origin": origin})
        assert answer.status_code == 403 and "cross-origin" in answer.json()["detail"]
    referer = client.post(f"/api/v1/runs/{run.id}/approve", headers={"Referer": "https://evil.example/page"})
    assert referer.status_code == 403
    assert status(database, run.id) == "awaiting_approval" and enqueuer.runs == []


def test_the_page_form_carries_a_token_that_is_checked(local):
    client, database, enqueuer = local
    run = waiting_run(database)
    page = client.get(f"/runs/{run.id}").text
    assert "local mode" in page
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    cookie = client.cookies.get("scrub_session")
    assert cookie and token not in cookie  # signed, not readable as such
    missing = client.post(f"/api/v1/runs/{run.id}/approve", headers={"Origin": LOCAL})
    assert missing.status_code == 403 and "CSRF" in missing.json()["detail"]
    ok = client.post(f"/api/v1/runs/{run.id}/approve?next=/runs/{run.id}", data={"csrf_token": token},
                     headers={"Origin": LOCAL}, follow_redirects=False)
    assert ok.status_code == 303 and status(database, run.id) == "queued"
    assert enqueuer.runs == [(run.id, "default")]


def test_a_local_script_without_browser_headers_may_act(local):
    client, database, _ = local
    run = waiting_run(database)
    assert client.post(f"/api/v1/runs/{run.id}/approve").status_code == 202


def test_a_rebound_host_name_is_not_this_site(tmp_path):
    """DNS rebinding: evil.example resolving to 127.0.0.1 posts with a matching Origin and Host."""
    settings = Settings(data_dir=tmp_path / "data")
    settings.ensure_data_dir()
    database = migrated_database(settings.resolved_database_url)
    run = waiting_run(database)
    from app.api import create_app

    with TestClient(create_app(settings, enqueuer=RecordingEnqueuer()), base_url="http://evil.example:8000") as client:
        answer = client.post(f"/api/v1/runs/{run.id}/approve", headers={"Origin": "http://evil.example:8000"})
    assert answer.status_code == 403 and status(database, run.id) == "awaiting_approval"
    database.dispose()
