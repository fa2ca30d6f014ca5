"""The tracked bugs, as the runs tell them: found, re-checked, fixed, scrubbed again."""

from __future__ import annotations

from datetime import timedelta

from app.db import progression, queries
from app.db.models import StageEvent
from app.domain import utcnow


def add(database, *, stages: dict[str, dict] | None = None, **fields) -> int:
    with database.session() as session:
        run = queries.create_run(session, **{"repo": "o/r", **fields})
        for name, output in (stages or {}).items():
            session.add(StageEvent(run_id=run.id, stage=name, status="done", output=output))
        session.commit()
        return run.id


def found(database, number: int = 7, environment: str = "2.13.0+cpu", **fields) -> int:
    reproduction = {"verdict": "reproduces", "runs": 5, "reproduced": 5, "interval": [0.57, 1.0],
                    "result": {"environment": environment}}
    return add(database, kind="issue", issue=number, status="succeeded", verdict="reproduces", title="a bug",
               stages={"select": {"repro": {"source": "raise RuntimeError('x')\n", "trusted": True}},
                       "reproduce": {"reproduction": reproduction, "verdict": "reproduces"}}, **fields)


def recheck(database, number: int = 7, *, verdict: str | None, status: str = "succeeded", build: str = "nightly 2026-03-05",
            target: str = "issue") -> int:
    return add(database, kind="progression", issue=number, status=status, verdict=verdict,
               params={"target": target, "build": {"label": build}}, ended_at=utcnow())


def bugs(database):
    with database.session() as session:
        return {(b.repo, b.number, b.target): b for b in progression.tracked(session)}


def test_an_issue_found_reproducing_is_tracked_from_the_build_it_reproduced_on(database):
    source = found(database)
    add(database, kind="issue", issue=8, status="succeeded", verdict="fixed")  # never reproduced: not tracked
    (bug,) = bugs(database).values()
    assert (bug.number, bug.target, bug.state, bug.build, bug.source_run) == (7, "issue", "reproduces", "2.13.0+cpu", source)
    assert bug.open and bug.last_check_run is None and bug.title == "a bug"


def test_re_checks_move_the_state_and_an_inconclusive_one_only_counts_as_a_check(database):
    found(database)
    first = recheck(database, verdict="reproduces", build="nightly 2026-03-04")
    bug = bugs(database)[("o/r", 7, "issue")]
    assert (bug.state, bug.build, bug.last_check_run) == ("reproduces", "nightly 2026-03-04", first)
    unsure = recheck(database, verdict="inconclusive", build="nightly 2026-03-05")
    bug = bugs(database)[("o/r", 7, "issue")]
    assert (bug.state, bug.build) == ("reproduces", "nightly 2026-03-04")  # the state holds
    assert (bug.last_check_run, bug.last_check_verdict, bug.last_check_build) == (unsure, "inconclusive",
                                                                                 "nightly 2026-03-05")
    recheck(database, verdict="fixed", build="nightly 2026-03-06")
    bug = bugs(database)[("o/r", 7, "issue")]
    assert bug.state == "fixed" and not bug.open


def test_an_active_re_check_is_shown_and_a_failed_one_keeps_the_state(database):
    found(database)
    recheck(database, verdict=None, status="failed")
    running = recheck(database, verdict=None, status="running")
    bug = bugs(database)[("o/r", 7, "issue")]
    assert bug.state == "reproduces" and bug.active_run == running


def test_a_newer_scrub_of_the_issue_replaces_the_state(database):
    found(database)
    again = add(database, kind="issue", issue=7, status="succeeded", verdict="fixed")
    bug = bugs(database)[("o/r", 7, "issue")]
    assert (bug.state, bug.source_run, bug.open) == ("fixed", again, False)


def test_a_ci_job_s_draft_pr_is_tracked_as_a_pull(database):
    job = add(database, kind="ci_failure", status="succeeded", verdict="success: deterministic", title="test_x fails",
              stages={"publish": {"pr_number": 12, "pr_url": "https://github.com/o/r/pull/12"}})
    add(database, kind="ci_failure", status="succeeded", stages={"publish": {}})  # no PR: nothing tracked
    bug = bugs(database)[("o/r", 12, "pull")]
    assert (bug.state, bug.source_run, bug.target) == ("reproduces", job, "pull")
    recheck(database, 12, verdict="fixed", target="pull", build="")
    assert bugs(database)[("o/r", 12, "pull")].state == "fixed"


def test_the_budget_spent_counts_progression_runs_per_repository(database):
    found(database)
    recheck(database, verdict="reproduces")
    recheck(database, verdict="reproduces")
    add(database, kind="progression", repo="O/Other", issue=3, status="queued", params={"target": "issue"})
    with database.session() as session:
        assert progression.runs_since(session, utcnow() - timedelta(days=1)) == {"o/r": 2, "o/other": 1}
        assert progression.runs_since(session, utcnow() + timedelta(minutes=1)) == {}


def test_a_run_s_state_is_its_finished_stages_merged(database):
    source = found(database)
    with database.session() as session:
        state = progression.run_state(session, source)
    assert state["repro"]["source"] == "raise RuntimeError('x')\n" and state["verdict"] == "reproduces"


def test_a_scrub_of_the_issue_in_progress_holds_its_re_checks(database):
    found(database)
    scrub = add(database, kind="issue", issue=7, status="running")
    assert bugs(database)[("o/r", 7, "issue")].active_run == scrub
