"""The run page, served by the app: untrusted text escaped or rendered safely, every part there."""

from __future__ import annotations

from app.web.run_page import log_tail, timeline
from tests.web import sample_runs


def test_the_report_is_rendered_and_untrusted_markup_is_text(client, database, settings):
    run_id = sample_runs.reproduced_issue_run(database, settings)
    page = client.get(f"/runs/{run_id}").text
    assert '<div class="markdown"><h1>Scrub report</h1>' in page
    assert "<script>" not in page and "<img src=x" not in page and 'href="javascript:' not in page
    assert "&lt;script&gt;window.__pwned" in page  # title, report, log and output: all shown as text
    assert '<a href="https://github.com/o/r/issues/12" rel="nofollow noopener noreferrer">the issue</a>' in page


def test_figures_repros_and_diff_are_on_the_page(client, database, settings):
    page = client.get(f"/runs/{sample_runs.reproduced_issue_run(database, settings)}").text
    assert '<span class="interval">38–96%</span>' in page and "4/5" in page
    assert 'data-release="2.12" class="changed"' in page
    assert 'class="code repro-diff"' in page and '<span class="gi">+torch.ones(2, 3) @ torch.ones(4, 5)</span>' in page
    assert 'class="code repro-minimized"' in page and 'class="code repro-original"' in page
    assert 'id="content-output"' in page and "shapes torch.Size([2, 3])" in page


def test_a_finished_run_has_retry_no_approve_and_no_live_stream(client, database, settings):
    page = client.get(f"/runs/{sample_runs.reproduced_issue_run(database, settings)}").text
    assert "/retry" in page and "/approve" not in page and "/reject" not in page and "data-events" not in page


def test_an_active_run_subscribes_to_its_event_stream(client, database):
    run_id = sample_runs.add_run(database, status="running")
    response = client.get(f"/runs/{run_id}")
    assert f'data-events="/runs/{run_id}/events"' in response.text and 'src="/static/live.js"' in response.text
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "connect-src 'self'" in policy



def test_unknown_run_is_404(client):
    assert client.get("/runs/12345").status_code == 404
    assert client.get("/runs/12345/events").status_code == 404


def test_an_artifact_as_plain_text_is_never_rendered(client, database, settings):
    run_id = sample_runs.reproduced_issue_run(database, settings)
    response = client.get(f"/runs/{run_id}/artifacts/report.md")
    assert response.text == sample_runs.REPORT and response.headers["content-type"].startswith("text/plain")
    assert response.headers["content-security-policy"].startswith("sandbox")
    assert client.get(f"/runs/{run_id}/artifacts/missing.md").status_code == 404


def test_static_assets_are_served(client):
    for asset, kind in (("/static/live.js", "javascript"), ("/static/status.css", "text/css"), ("/static/pygments.css", "text/css")):
        served = client.get(asset)
        assert served.status_code == 200 and kind in served.headers["content-type"]
    assert client.get("/favicon.ico").status_code == 204


def test_timeline_durations_and_the_longest_stage(database, settings):
    run_id = sample_runs.reproduced_issue_run(database, settings)
    ctx = sample_runs.context(database, settings, run_id)
    ctx.stage_started("report")  # still running
    with database.session() as session:
        rows, longest = timeline(sample_runs.queries.stage_events(session, run_id))
    assert [row.running for row in rows] == [False] * 5 + [True]
    assert longest == max(row.seconds for row in rows) and all(row.seconds >= 0 for row in rows)


def test_the_log_tail_keeps_the_last_lines():
    from app.db.models import Artifact

    log = Artifact(run_id=1, name="log", content="".join(f"line {n}\n" for n in range(500)))
    assert log_tail([log], lines=3) == "line 497\nline 498\nline 499" and log_tail([]) == ""


def test_a_release_that_could_not_be_tested_is_shown_as_such_with_the_range(client, database, settings):
    run_id = sample_runs.add_run(database, target="https://github.com/o/r/issues/21")
    ctx = sample_runs.context(database, settings, run_id)
    sample_runs.stage(ctx, "bisect", "done", "fixed between 2.1 and 2.3; 2.2 could not be tested", {"bisect": {
        "first_changed": None, "last_unchanged": None, "oldest_outcome": True, "changed_between": ["2.1", "2.3"],
        "untested": ["2.2"], "probes": {"2.1": True, "2.3": False},
        "releases": [{"label": "2.1", "outcome": True, "runs": 1},
                     {"label": "2.2", "outcome": None, "runs": 1, "why": "<b>No module named 'x'</b>"},
                     {"label": "2.3", "outcome": False, "runs": 10}]}})
    page = client.get(f"/runs/{run_id}").text
    assert 'data-release="2.2" class="untested"' in page and "could not be tested" in page
    assert "&lt;b&gt;No module named" in page and "<b>No module" not in page
    assert 'class="changed"' not in page  # no certain boundary
    assert "(10 runs)" in page and "← changed by here (after 2.1; untested in between)" in page


def test_the_repros_download_as_files_and_the_page_offers_commands_to_rerun_it(client, database, settings):
    run_id = sample_runs.reproduced_issue_run(database, settings)
    page = client.get(f"/runs/{run_id}").text
    assert f'href="/runs/{run_id}/repro/original.py" download' in page and f'href="/runs/{run_id}/repro/minimized.py"' in page
    assert "scrub issue https://github.com/o/r/issues/12" in page
    assert f"scrub repro run-{run_id}-minimized.py --runs 5" in page and 'class="copy" data-copy=' in page
    saved = client.get(f"/runs/{run_id}/repro/minimized.py")
    assert saved.status_code == 200 and saved.text == sample_runs.MINIMIZED
    assert saved.headers["content-disposition"] == f'attachment; filename="run-{run_id}-minimized.py"'
    assert saved.headers["x-content-type-options"] == "nosniff" and "sandbox" in saved.headers["content-security-policy"]
    assert client.get(f"/runs/{run_id}/repro/original.py").text == sample_runs.ORIGINAL
    assert client.get(f"/runs/{run_id}/repro/secrets.py").status_code == 404
    assert client.get("/runs/99999/repro/original.py").status_code == 404


def test_the_page_names_the_environment_the_repro_ran_in(client, database, settings):
    page = client.get(f"/runs/{sample_runs.reproduced_issue_run(database, settings)}").text
    assert '<figure class="environment">' in page
    assert '<dd class="torch">2.13.0+cpu' in page and '<dd class="device">CPU</dd>' in page
    assert '<dd class="python">3.11.7</dd>' in page


def test_after_approval_no_stale_waiting_row_and_no_awaiting_verdict_while_it_runs(client, database, settings):
    from app.api.access import LOCAL_USER
    from app.db import commands
    from app.db.models import Run

    run_id = sample_runs.waiting_issue_run(database, settings)
    with database.session() as session:
        commands.approve(session, session.get(Run, run_id), LOCAL_USER)
        session.commit()
    ctx = sample_runs.context(database, settings, run_id)
    ctx.set_status("running")
    sample_runs.stage(ctx, "review", "done", f"approved by {LOCAL_USER} (2 findings)", {})
    ctx.stage_started("reproduce")
    page = client.get(f"/runs/{run_id}").text
    assert 'data-stage="review" data-status="waiting"' not in page and 'data-stage="review" data-status="done"' in page
    assert "awaiting-approval" not in page  # neither in the facts nor in the list
    assert "awaiting-approval" not in client.get("/").text.split(f'data-run="{run_id}"')[1].split("</tr>")[0]
    assert f'<dd class="approved-by">{LOCAL_USER}</dd>' in page


def test_local_mode_approvals_name_the_person_not_the_page():
    import getpass

    from app.api.access import LOCAL_USER

    assert LOCAL_USER == f"{getpass.getuser()} (local mode)"
