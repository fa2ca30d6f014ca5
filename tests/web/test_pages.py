"""The status page: runs table, run page, and untrusted text rendered escaped."""

from __future__ import annotations

from app.db import queries
from app.db.context import DbRunContext

HOSTILE = "<script>alert('pwned')</script><img src=x onerror=alert(1)>"


def make_run(database, **fields):
    with database.session() as session:
        run = queries.create_run(session, **{"kind": "issue", "repo": "o/r", "issue": 12, **fields})
        session.commit()
        return run


def test_runs_table_links_each_run(client, database):
    issue_run = make_run(database, target="https://github.com/o/r/issues/12")
    ci_run = make_run(database, kind="ci_ingest", issue=None, params={"workflow_run_id": 99}, status="succeeded")
    page = client.get("/").text
    assert f'href="/runs/{issue_run.id}"' in page and f'href="/runs/{ci_run.id}"' in page
    assert "#12" in page and "CI run 99" in page and "ci_ingest" in page and "ago" in page
    assert 'http-equiv="refresh"' in page  # a run is still queued


def test_run_page_shows_the_timeline_and_escapes_untrusted_output(client, database, settings):
    run = make_run(database, status="awaiting_approval", verdict=HOSTILE)
    ctx = DbRunContext(database, run, settings)
    ctx.stage_started("reproduce")
    ctx.stage_finished("reproduce", "done", HOSTILE, {})
    ctx.save_artifact("report.md", "markdown", f"# Report\n\n```\n{HOSTILE}\n```\n")
    page = client.get(f"/runs/{run.id}").text
    assert "<script>" not in page and "<img src=x" not in page
    assert "&lt;script&gt;" in page
    assert "reproduce" in page and "report.md" in page
    assert f'action="/api/v1/runs/{run.id}/approve?next=/runs/{run.id}"' in page
    assert f'action="/api/v1/runs/{run.id}/retry?next=/runs/{run.id}"' in page


def test_finished_run_page_has_retry_but_no_approve_and_no_refresh(client, database):
    run = make_run(database, status="succeeded")
    page = client.get(f"/runs/{run.id}").text
    assert "/retry" in page and "/approve" not in page and 'http-equiv="refresh"' not in page


def test_unknown_run_is_404(client):
    assert client.get("/runs/12345").status_code == 404
