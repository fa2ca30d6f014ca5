"""The lease of a run whose stages are on a repro worker: each step a compare-and-swap on the
job's owner, so only the job the run waits on moves it, and a silent job is reaped."""

from __future__ import annotations

import time
from datetime import timedelta

from app.db import jobs, leases, queries
from app.db.jobs import JobStage
from app.db.models import Run, utcnow


def running(database, owner: str = "trusted-1") -> Run:
    with database.session() as session:
        run = queries.create_run(session, kind="selftest", repo="o/r", trigger="test")
        session.commit()
    assert leases.claim(database, run.id, owner, 60)
    return run


def load(database, run_id: int) -> Run:
    with database.session() as session:
        return session.get(Run, run_id)


def events(database, run_id: int) -> list[tuple[str, str, int]]:
    with database.session() as session:
        return [(e.stage, e.status, e.attempt) for e in queries.stage_events(session, run_id)]


def test_the_job_holds_the_run_from_handoff_to_result(database):
    run = running(database)
    assert not jobs.hand_off(database, run.id, "someone-else", "job:a", "repro-gpu")
    assert jobs.hand_off(database, run.id, "trusted-1", "job:a", "repro-gpu")
    stored = load(database, run.id)
    assert (stored.status, stored.queue, stored.lease_owner, stored.lease_expires_at) == ("queued", "repro-gpu", "job:a", None)
    assert leases.reap(database, max_attempts=3) == []  # waiting for a GPU worker is not being lost
    assert not jobs.beat(database, run.id, "job:b", "reproduce", 60)  # another job's beat
    assert jobs.beat(database, run.id, "job:a", "reproduce", 60)
    assert jobs.beat(database, run.id, "job:a", "reproduce", 60)  # one running event per stage
    assert load(database, run.id).status == "running" and events(database, run.id) == [("reproduce", "running", 1)]
    assert not jobs.take_back(database, run.id, "job:b", "trusted-2", 60)
    assert jobs.take_back(database, run.id, "job:a", "trusted-2", 60)
    assert not jobs.take_back(database, run.id, "job:a", "trusted-3", 60)  # the same result twice
    assert load(database, run.id).lease_owner == "trusted-2"


def test_a_job_whose_beats_stop_is_reaped_and_its_stage_marked_lost(database):
    run = running(database)
    jobs.hand_off(database, run.id, "trusted-1", "job:a", "repro-cpu")
    jobs.beat(database, run.id, "job:a", "work", 60)
    with database.session() as session:
        stored = session.get(Run, run.id)
        stored.lease_expires_at = utcnow() - timedelta(seconds=1)
        session.add(stored)
        session.commit()
    [reaped] = leases.reap(database, max_attempts=3)
    assert reaped.requeued and load(database, run.id).lease_owner is None
    assert events(database, run.id) == [("work", "failed", 1)]
    assert not jobs.take_back(database, run.id, "job:a", "trusted-2", 60)  # its late result is dropped


def test_a_result_is_stored_whole_with_the_jobs_times(database):
    run = running(database)
    jobs.hand_off(database, run.id, "trusted-1", "job:a", "repro-cpu")
    jobs.beat(database, run.id, "job:a", "work", 60)
    start = time.time() - 30
    jobs.record_all(database, run.id, [JobStage("work", "done", "ok", {"worked_on": "repro-cpu"}, start, start + 20)],
                    [("selftest.md", "markdown", "# hi")], ["one", "two"])
    with database.session() as session:
        detail = queries.run_detail(session, run.id)
    [event] = detail.stages
    assert (event.stage, event.status, event.attempt, event.output) == ("work", "done", 1, {"worked_on": "repro-cpu"})
    assert round((event.ended_at - event.started_at).total_seconds()) == 20
    assert "selftest.md" in [a.name for a in detail.artifacts]
    with database.session() as session:
        assert [line.line for line in queries.run_log(session, run.id)][-2:] == ["one", "two"]
    assert jobs.give_back(database, run.id, "trusted-1", "job:a", 60) is False  # trusted-1 no longer holds it
