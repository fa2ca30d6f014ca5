"""Job heartbeats over the real embedded broker (kombu's filesystem transport), applied by the
reaper's pass: the lease of the job the run waits on is renewed, nobody else's."""

from __future__ import annotations

from app.db import jobs, leases, queries
from app.db.models import Run
from app.settings import Settings
from workers.beats import apply_beats, drain, send_beat
from workers.celery_app import create_celery
from workers.jobs import Beat


def test_beats_cross_the_broker_and_renew_only_the_waiting_jobs_lease(tmp_path, database):
    app = create_celery(Settings(data_dir=tmp_path))
    with database.session() as session:
        run = queries.create_run(session, kind="selftest", repo="o/r", trigger="test")
        session.commit()
    leases.claim(database, run.id, "trusted", 60)
    jobs.hand_off(database, run.id, "trusted", "job:live", "repro-cpu")
    assert drain(app) == []
    for beat in (Beat("live", run.id, "work", 30.0), Beat("stale", run.id, "work", 30.0),
                 Beat("live", run.id, "work", 30.0)):
        send_beat(app, beat)
    beats = drain(app)
    # every beat arrives once (the embedded broker does not keep the order of messages sent together)
    assert sorted(b.job_id for b in beats) == ["live", "live", "stale"] and drain(app) == []
    assert apply_beats(database, beats) == 1  # the stale job's beat renews nothing
    with database.session() as session:
        stored = session.get(Run, run.id)
        assert stored.status == "running" and stored.lease_owner == "job:live"
        remaining = (stored.lease_expires_at.replace(tzinfo=None) - stored.updated_at.replace(tzinfo=None))
    assert 59 <= remaining.total_seconds() <= 61  # two leases of the job's 30 s
