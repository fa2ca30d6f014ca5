"""The reaper pass: requeue and enqueue runs whose lease expired, and survive a broker outage."""

from __future__ import annotations

from datetime import timedelta

from app.db import leases, queries
from app.db.models import Run, utcnow
from workers.reaper import reap_once


def stranded_run(database, queue="repro-cpu") -> Run:
    with database.session() as session:
        run = queries.create_run(session, kind="selftest", repo="o/r", queue=queue)
        session.commit()
    leases.claim(database, run.id, "dead-worker", 60)
    with database.session() as session:
        stored = session.get(Run, run.id)
        stored.lease_expires_at = utcnow() - timedelta(seconds=5)
        session.add(stored)
        session.commit()
    return run


def test_a_stranded_run_is_enqueued_again_on_its_queue(database, enqueuer):
    run = stranded_run(database)
    reaped = reap_once(database, enqueuer, max_attempts=3)
    assert [r.run_id for r in reaped] == [run.id]
    assert enqueuer.runs == [(run.id, "repro-cpu")]


class BrokenBroker:
    def run_pipeline(self, run_id, queue="default"):
        raise ConnectionError("broker down")


def test_a_broker_outage_leaves_the_run_for_the_next_pass(database, enqueuer):
    run = stranded_run(database)
    reap_once(database, BrokenBroker(), max_attempts=5)
    with database.session() as session:
        assert session.get(Run, run.id).status == "running"  # stranded again, not queued forever
    reap_once(database, enqueuer, max_attempts=5)
    assert enqueuer.runs == [(run.id, "repro-cpu")]
