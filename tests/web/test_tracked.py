"""`/tracked` and `/api/v1/tracked`: each tracked bug with its state and its last check."""

from __future__ import annotations

import re

from app.domain import utcnow
from tests.web import sample_runs


def test_each_tracked_bug_shows_its_state_and_last_check(client, database, settings):
    found = sample_runs.reproduced_issue_run(database, settings, title="matmul <b>shape</b> error")
    check = sample_runs.add_run(database, kind="progression", status="succeeded", verdict="reproduces",
                                params={"target": "issue", "build": {"label": "nightly 2026-03-05"}},
                                ended_at=utcnow())
    page = client.get("/tracked").text
    assert re.findall(r'<tr data-bug="([^"]+)">', page) == ["o/r#12"]
    assert f'href="/runs/{check}"' in page and "on nightly 2026-03-05" in page
    assert f'href="/runs/{found}"' in page and 'href="https://github.com/o/r/issues/12"' in page
    assert "matmul &lt;b&gt;shape&lt;/b&gt; error" in page  # a title is text, never markup
    assert 'href="/tracked"' in client.get("/").text  # reachable from every page's header


def test_a_fixed_bug_is_listed_after_the_open_ones(client, database, settings):
    fixed = sample_runs.reproduced_issue_run(database, settings)
    sample_runs.add_run(database, kind="progression", status="succeeded", verdict="fixed",
                        params={"target": "issue", "build": {"label": "2.14.0"}})
    live = sample_runs.reproduced_issue_run(database, settings, issue=13)
    page = client.get("/tracked").text
    assert re.findall(r'<tr data-bug="([^"]+)">', page) == ["o/r#13", "o/r#12"]
    assert fixed != live


def test_nothing_tracked_says_so(client):
    assert "Nothing tracked yet" in client.get("/tracked").text
