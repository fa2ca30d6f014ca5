"""The approval view: the exact code, the findings by line, the author; and the reject button."""

from __future__ import annotations

from app.api.access import LOCAL_USER
from app.db import queries
from app.db.models import Run
from app.web.approval import approval_view
from tests.web import sample_runs


def view_of(database, run_id):
    with database.session() as session:
        return approval_view(session.get(Run, run_id), queries.stage_events(session, run_id))


def test_the_view_has_the_code_findings_and_author(database, settings):
    view = view_of(database, sample_runs.waiting_issue_run(database, settings))
    assert view.stage == "review" and "2 findings" in view.reason
    assert view.source == sample_runs.APPROVAL_SOURCE
    assert [f["line"] for f in view.findings] == [3, 4]  # sorted by line
    assert view.code.count('class="hll"') == 2 and view.author_url == "https://github.com/mallory"
    assert view.source_url == "https://github.com/o/r/issues/13#issuecomment-1"


def test_only_a_waiting_run_has_one(database, settings):
    assert view_of(database, sample_runs.reproduced_issue_run(database, settings)) is None


def test_an_odd_author_or_url_is_not_made_a_link(database, settings):
    run_id = sample_runs.add_run(database, status="running")
    ctx = sample_runs.context(database, settings, run_id)
    sample_runs.stage(ctx, "select", "done", "", {"repro": {"source": "x = 1\n", "author": "../evil", "url": "javascript:x"}})
    sample_runs.stage(ctx, "review", "waiting", "not a collaborator", {"findings": []})
    ctx.set_status("awaiting_approval")
    view = view_of(database, run_id)
    assert view.author == "../evil" and view.author_url is None and view.source_url is None


def test_the_run_page_shows_it_with_both_buttons(client, database, settings):
    run_id = sample_runs.waiting_issue_run(database, settings)
    page = client.get(f"/runs/{run_id}").text
    assert 'id="approval"' in page and '<tr data-line="3">' in page and "GITHUB_TOKEN" in page
    assert f'action="/api/v1/runs/{run_id}/approve?next=/runs/{run_id}"' in page
    assert f'action="/api/v1/runs/{run_id}/reject?next=/runs/{run_id}"' in page


def test_reject_cancels_with_the_reason(client, database, settings, enqueuer):
    run_id = sample_runs.waiting_issue_run(database, settings)
    response = client.post(f"/api/v1/runs/{run_id}/reject?next=/runs/{run_id}", data={"reason": "  curl | sh\n please "},
                           follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == f"/runs/{run_id}"
    run = client.get(f"/api/v1/runs/{run_id}").json()
    assert run["status"] == "cancelled" and run["error"] == f"rejected by {LOCAL_USER}: curl | sh please"
    assert run["params"]["rejected_by"] == LOCAL_USER and run["ended_at"] and enqueuer.runs == []


def test_reject_of_a_run_not_waiting_is_a_409_and_changes_nothing(client, database, settings):
    run_id = sample_runs.reproduced_issue_run(database, settings)
    response = client.post(f"/api/v1/runs/{run_id}/reject", params={"reason": "no"})
    assert response.status_code == 409 and "not awaiting approval" in response.json()["message"]
    assert client.get(f"/api/v1/runs/{run_id}").json()["status"] == "succeeded"
    assert client.post("/api/v1/runs/999/reject").status_code == 404


def test_reject_via_the_json_api_says_what_happened(client, database, settings):
    run_id = sample_runs.waiting_issue_run(database, settings)
    response = client.post(f"/api/v1/runs/{run_id}/reject", params={"reason": "unsafe"})
    assert response.status_code == 200 and response.json()["message"] == f"run {run_id} rejected by {LOCAL_USER}"
    assert client.get(f"/api/v1/runs/{run_id}").json()["error"] == f"rejected by {LOCAL_USER}: unsafe"
