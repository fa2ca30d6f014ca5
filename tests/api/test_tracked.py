"""`/api/v1/tracked`: the tracked bugs as JSON, what the status page's `/tracked` shows."""

from __future__ import annotations

from app.domain import utcnow
from tests.web import sample_runs


def test_each_tracked_bug_with_its_state_and_last_check(client, database, settings):
    found = sample_runs.reproduced_issue_run(database, settings)
    check = sample_runs.add_run(database, kind="progression", status="succeeded", verdict="reproduces",
                                params={"target": "issue", "build": {"label": "nightly 2026-03-05"}}, ended_at=utcnow())
    (bug,) = client.get("/api/v1/tracked").json()
    assert (bug["repo"], bug["number"], bug["target"], bug["state"], bug["open"]) == ("o/r", 12, "issue", "reproduces",
                                                                                      True)
    assert (bug["source_run"], bug["last_check_run"], bug["last_check_build"]) == (found, check, "nightly 2026-03-05")
    assert bug["build"] == "nightly 2026-03-05" and bug["last_check_at"].startswith(str(utcnow().year))


def test_nothing_tracked_is_an_empty_list(client):
    assert client.get("/api/v1/tracked").json() == []
