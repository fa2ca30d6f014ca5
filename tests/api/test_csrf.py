"""Local mode (no OAuth): the browser signed in with the token `scrub serve` printed; a page on
another origin still cannot press a button, and nobody without the token can."""

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

    app = create_app(settings, enqueuer=enqueuer, local_token="the-printed-token")
    with TestClient(app, base_url=LOCAL) as client:
        assert client.get("/login?token=the-printed-token&next=/", follow_redirects=False).status_code == 303
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


def test_a_local_script_acts_only_with_the_token(local):
    """Any process on the machine reaches 127.0.0.1: without the token it is anonymous."""
    client, database, enqueuer = local
    run = waiting_run(database)
    client.cookies.clear()
    assert client.post(f"/api/v1/runs/{run.id}/approve").status_code == 401
    assert client.post(f"/api/v1/runs/{run.id}/approve", headers={"Authorization": "Bearer guess"}).status_code == 401
    assert status(database, run.id) == "awaiting_approval" and enqueuer.runs == []
    right = client.post(f"/api/v1/runs/{run.id}/approve", headers={"Authorization": "Bearer the-printed-token"})
    assert right.status_code == 202 and status(database, run.id) == "queued"


def test_a_rebound_host_name_is_not_this_site(tmp_path):
    """DNS rebinding: evil.example resolving to 127.0.0.1 posts with a matching Origin and Host."""
    settings = Settings(data_dir=tmp_path / "data")
    settings.ensure_data_dir()
    database = migrated_database(settings.resolved_database_url)
    run = waiting_run(database)
    from app.api import create_app

    with TestClient(create_app(settings, enqueuer=RecordingEnqueuer()), base_url="http://evil.example:8000") as client:
        answer = client.post(f"/api/v1/runs/{run.id}/approve", headers={"Origin": "http://evil.example:8000"})
        read = client.get("/api/v1/runs")
    assert answer.status_code == 400 and status(database, run.id) == "awaiting_approval"
    assert read.status_code == 400 and "DNS rebinding" in read.text  # nor can it read
    database.dispose()
