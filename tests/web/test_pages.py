"""The status page: runs table, run page, and untrusted text rendered escaped."""

from __future__ import annotations

from app.db import queries
from app.db.context import DbRunContext
from app.web.display import duration

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


def test_pages_allow_only_their_own_script_and_stylesheet(client, database):
    run = make_run(database, status="running")
    response = client.get(f"/runs/{run.id}")
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "style-src 'self'" in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert 'src="/static/live.js"' in response.text and 'data-refresh="5"' in response.text
    for asset, kind in (("/static/live.js", "javascript"), ("/static/status.css", "text/css")):
        served = client.get(asset)
        assert served.status_code == 200 and kind in served.headers["content-type"]


def test_an_artifact_as_plain_text_is_never_rendered(client, database, settings):
    run = make_run(database, status="succeeded")
    DbRunContext(database, run, settings).save_artifact("report.md", "markdown", HOSTILE)
    response = client.get(f"/runs/{run.id}/artifacts/report.md")
    assert response.text == HOSTILE and response.headers["content-type"].startswith("text/plain")
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["content-security-policy"].startswith("sandbox")
    assert client.get(f"/runs/{run.id}/artifacts/missing.md").status_code == 404


def test_the_run_page_puts_the_report_first_and_the_log_last(client, database, settings):
    run = make_run(database, status="succeeded")
    ctx = DbRunContext(database, run, settings)
    ctx.log("started")
    ctx.save_artifact("repro_original.py", "repro", "import torch\n")
    ctx.save_artifact("report.md", "report", "# Report\n")
    page = client.get(f"/runs/{run.id}").text
    assert page.index('id="artifact-report.md"') < page.index('id="artifact-repro_original.py"') < page.index('id="artifact-log"')


def test_durations_read_as_a_person_would_say_them():
    assert [duration(s) for s in (0.01, 2.345, 42, 75, 7260, 90000)] == ["<0.1s", "2.3s", "42s", "1m 15s", "2h 1m", "1d 1h"]
