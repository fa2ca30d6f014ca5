"""`/api/v1/runs` and the approve / retry buttons."""

from __future__ import annotations

from app.api.access import LOCAL_USER
from app.db import queries
from app.db.context import DbRunContext
from app.db.models import Run


def make_run(database, **fields) -> Run:
    with database.session() as session:
        run = queries.create_run(session, **{"kind": "issue", "repo": "o/r", "issue": 7, **fields})
        session.commit()
        return run


def test_runs_are_listed_newest_first(client, database):
    older, newer = make_run(database, issue=1), make_run(database, issue=2, kind="ci_ingest")
    listed = client.get("/api/v1/runs").json()
    assert [r["id"] for r in listed] == [newer.id, older.id]
    assert set(listed[0]) >= {"id", "kind", "repo", "issue", "status", "verdict", "created_at", "updated_at"}
    assert listed[1]["issue"] == 1 and listed[1]["status"] == "queued"


def test_one_run_with_its_stages_and_artifacts(client, database, settings):
    run = make_run(database)
    ctx = DbRunContext(database, run, settings)
    ctx.stage_started("fetch")
    ctx.stage_finished("fetch", "done", "2 comments", {"comments": 2})
    ctx.save_artifact("report.md", "markdown", "# Report")
    body = client.get(f"/api/v1/runs/{run.id}").json()
    assert [(s["stage"], s["status"], s["summary"]) for s in body["stages"]] == [("fetch", "done", "2 comments")]
    assert body["stages"][0]["duration_s"] >= 0
    assert {a["name"]: a["content"] for a in body["artifacts"]}["report.md"] == "# Report"
    assert client.get("/api/v1/runs/999").status_code == 404


def test_approve_requeues_a_waiting_run(client, database, enqueuer):
    run = make_run(database, status="awaiting_approval")
    response = client.post(f"/api/v1/runs/{run.id}/approve")
    assert response.status_code == 202
    body = client.get(f"/api/v1/runs/{run.id}").json()
    assert body["status"] == "queued" and body["params"]["approved_by"] == LOCAL_USER
    assert enqueuer.runs == [(run.id, "default")]


def test_approve_of_a_run_that_is_not_waiting_changes_nothing(client, database, enqueuer):
    run = make_run(database, status="running")
    assert client.post(f"/api/v1/runs/{run.id}/approve").status_code == 409
    assert enqueuer.runs == []


def test_retry_from_the_status_page_redirects_back(client, database, enqueuer):
    run = make_run(database, status="failed", error="boom")
    response = client.post(f"/api/v1/runs/{run.id}/retry?next=/runs/{run.id}", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == f"/runs/{run.id}"
    assert client.get(f"/api/v1/runs/{run.id}").json()["error"] is None
    assert enqueuer.runs == [(run.id, "default")]


def test_redirects_only_to_this_site(client, database):
    run = make_run(database, status="failed")
    response = client.post(f"/api/v1/runs/{run.id}/retry?next=//evil.example", follow_redirects=False)
    assert response.status_code == 202

