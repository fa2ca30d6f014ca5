"""Counts for /metrics, from the database: deliveries by outcome class, runs, verdicts, stage
duration histograms, sandbox runs. On SQLite here and on Postgres (duration arithmetic differs)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.db import queries, stats
from app.db.models import StageEvent, utcnow


def seed(database) -> None:
    with database.session() as session:
        for n, outcome in enumerate(["pong", "ignored: not a scrub label", "issue run 1 queued", "/scrub retry queued",
                                     "could not enqueue: ConnectionError", "received", "ignored: x"]):
            queries.record_delivery(session.connection(), f"d{n}", "issues" if n else "ping", None, None, outcome)
        a = queries.create_run(session, kind="issue", status="succeeded", verdict="reproduces")
        queries.create_run(session, kind="issue", status="succeeded", verdict="reproduces")
        queries.create_run(session, kind="issue", status="running")
        queries.create_run(session, kind="ci_failure", status="failed", verdict="x" * 300)
        start = utcnow()
        for seconds, stage in ((0.05, "fetch"), (3.0, "reproduce"), (4000.0, "reproduce")):
            session.add(StageEvent(run_id=a.id, stage=stage, status="done", started_at=start,
                                   ended_at=start + timedelta(seconds=seconds),
                                   output={"reproduction": {"outcomes": {"exception": 2, "ok": 1}}} if stage == "reproduce" else {}))
        session.add(StageEvent(run_id=a.id, stage="minimize", status="running", started_at=start))  # not finished: not counted
        session.add(StageEvent(run_id=a.id, stage="rerun", status="done", started_at=start, ended_at=start,
                               output={"rerun": {"runs": 10, "failures": 3, "timeouts": 1, "errors": 0, "other_failures": 0}}))
        session.commit()


def check(found: stats.Stats) -> None:
    assert found.deliveries == {("ping", "pong"): 1, ("issues", "ignored"): 2, ("issues", "queued"): 2,
                                ("issues", "not_queued"): 1, ("issues", "received"): 1}
    assert found.runs_finished == {("issue", "succeeded"): 2, ("ci_failure", "failed"): 1}
    assert found.runs_active == {("issue", "running"): 1}
    assert found.verdicts == {("issue", "reproduces"): 2, ("ci_failure", "other"): 1}  # free text: a closed label
    reproduce = found.stage_durations[("issue", "reproduce")]
    assert reproduce.count == 2 and reproduce.total == pytest.approx(4003.0, abs=0.01)
    bounds = dict(zip(stats.DURATION_BUCKETS, reproduce.buckets))
    assert (bounds[2.5], bounds[5], bounds[3600]) == (0, 1, 1)  # 3 s in the 5 s bucket; 4000 s only in +Inf
    assert found.stage_durations[("issue", "fetch")].buckets[0] == 1 and ("issue", "minimize") not in found.stage_durations
    assert found.sandbox_runs == {"exception": 4, "ok": 2, "failed": 3, "timeout": 1, "passed": 6}


def test_stats_on_sqlite(database):
    seed(database)
    with database.session() as session:
        check(stats.collect(session))


@pytest.mark.services
def test_stats_on_postgres(postgres_url):
    from tests.foundation import migrated_database

    database = migrated_database(postgres_url)
    try:
        seed(database)
        with database.session() as session:
            check(stats.collect(session))
    finally:
        database.dispose()


def test_an_empty_database_has_no_counts(database):
    with database.session() as session:
        found = stats.collect(session)
    assert (found.deliveries, found.runs_finished, found.stage_durations, found.sandbox_runs) == ({}, {}, {}, {})


def test_sandbox_outcomes_of_odd_outputs():
    assert stats.sandbox_outcomes({"reproduction": {"outcomes": {"ok": "many"}}}) == {}
    assert stats.sandbox_outcomes({"rerun": {"runs": 2}}) == {"passed": 2}
    assert stats.sandbox_outcomes({"rerun": "x"}) == {} and stats.sandbox_outcomes({}) == {}
