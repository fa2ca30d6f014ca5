"""Leases, the reaper's compare-and-swap, and one active run per issue or CI signature."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy.exc import IntegrityError
from sqlmodel import select

from app.db import commands, leases, queries
from app.db.models import Run, StageEvent, utcnow
from app.db.session import Database
from tests.foundation import migrated_database


def new_run(database, **fields) -> Run:
    with database.session() as session:
        run = queries.create_run(session, **{"kind": "issue", "repo": "o/r", "issue": 1, **fields})
        session.commit()
        return run


def load(database, run_id) -> Run:
    with database.session() as session:
        return session.get(Run, run_id)


def expire(database, run_id) -> None:
    with database.session() as session:
        run = session.get(Run, run_id)
        run.lease_expires_at = utcnow() - timedelta(seconds=1)
        session.add(run)
        session.commit()


def test_one_claim_wins_and_a_live_lease_is_respected(database):
    run = new_run(database)
    assert leases.claim(database, run.id, "w1", 60)
    assert not leases.claim(database, run.id, "w2", 60)  # a duplicate message while w1 works
    stored = load(database, run.id)
    assert (stored.status, stored.lease_owner) == ("running", "w1") and stored.started_at
    assert leases.renew(database, run.id, "w1", 60) and not leases.renew(database, run.id, "w2", 60)
    expire(database, run.id)
    assert leases.claim(database, run.id, "w2", 60)  # w1 is presumed dead
    assert not leases.renew(database, run.id, "w1", 60) and not leases.holds(database, run.id, "w1")


def test_reaper_requeues_an_expired_run_and_marks_the_lost_stage(database):
    run = new_run(database, queue="repro-cpu")
    leases.claim(database, run.id, "w1", 60)
    with database.session() as session:
        session.add(StageEvent(run_id=run.id, stage="fetch", status="done"))
        session.add(StageEvent(run_id=run.id, stage="reproduce", status="running"))
        session.commit()
    assert leases.reap(database, max_attempts=3) == []  # the lease is alive
    expire(database, run.id)
    [reaped] = leases.reap(database, max_attempts=3)
    assert (reaped.run_id, reaped.queue, reaped.requeued) == (run.id, "repro-cpu", True)
    stored = load(database, run.id)
    assert (stored.status, stored.attempts, stored.lease_owner) == ("queued", 1, None)
    with database.session() as session:
        events = {(e.stage, e.status) for e in queries.stage_events(session, run.id)}
    assert events == {("fetch", "done"), ("reproduce", "failed")}
    assert leases.reap(database, max_attempts=3) == []  # once


def test_reaper_gives_up_after_max_attempts(database):
    run = new_run(database)
    for attempt in (1, 2, 3):
        assert leases.claim(database, run.id, f"w{attempt}", 60)
        expire(database, run.id)
        [reaped] = leases.reap(database, max_attempts=3)
        assert reaped.requeued == (attempt < 3)
    stored = load(database, run.id)
    assert stored.status == "failed" and "worker lost 3 times" in stored.error
    with database.session() as session:  # retry works on it, and starts the count again
        outcome = commands.retry(session, session.get(Run, run.id))
        session.commit()
    assert outcome.enqueue_on and load(database, run.id).attempts == 0


def test_retry_works_on_a_stranded_run_but_not_on_a_live_one(database):
    run = new_run(database)
    leases.claim(database, run.id, "w1", 60)
    with database.session() as session:
        assert commands.retry(session, session.get(Run, run.id)).enqueue_on is None
    expire(database, run.id)
    with database.session() as session:
        outcome = commands.retry(session, session.get(Run, run.id))
        session.commit()
    assert outcome.enqueue_on == "default" and load(database, run.id).status == "queued"


def test_two_active_runs_of_one_issue_are_refused_by_the_database(database):
    first = new_run(database)
    with database.session() as session, pytest.raises(IntegrityError):
        queries.create_run(session, kind="issue", repo="O/R", issue=1)  # same issue, other case
    new_run(database, issue=2)  # another issue is fine
    with database.session() as session:
        done = session.get(Run, first.id)
        done.status = "succeeded"
        session.add(done)
        session.commit()
    second = new_run(database)  # the first finished: a new one may start
    assert second.active_key == first.active_key == "issue:o/r#1"


def test_two_active_ci_runs_of_one_signature_are_refused(database):
    params = {"fingerprint": "f" * 64}
    new_run(database, kind="ci_failure", issue=None, params=params)
    with database.session() as session, pytest.raises(IntegrityError):
        queries.create_run(session, kind="ci_failure", repo="o/r", params=params)
    new_run(database, kind="ci_failure", issue=None, params={"fingerprint": "e" * 64})


@pytest.mark.services
def test_the_index_holds_on_postgres(postgres_url):
    database = migrated_database(postgres_url)
    try:
        new_run(database)
        with database.session() as session, pytest.raises(IntegrityError):
            queries.create_run(session, kind="issue", repo="o/r", issue=1)
    finally:
        database.dispose()


def test_the_migration_keys_existing_runs_and_keeps_only_the_newest_active_duplicate(tmp_path):
    """A database from before the index, holding the race's two active runs, still upgrades."""
    from alembic import command

    from app.db.migrate import alembic_config

    url = f"sqlite:///{tmp_path / 'old.db'}"
    config = alembic_config(url)
    command.upgrade(config, "0001")
    engine = Database(url).engine
    with engine.begin() as connection:
        for status in ("succeeded", "running", "queued"):
            connection.exec_driver_sql(
                "INSERT INTO run (kind, repo, issue, target, \"trigger\", status, queue, params, created_at, updated_at) "
                f"VALUES ('issue', 'o/r', 1, '', '', '{status}', 'default', '{{}}', '2026-01-01', '2026-01-01')")
    command.upgrade(config, "head")
    with engine.begin() as connection:
        rows = connection.exec_driver_sql("SELECT id, status, active_key FROM run ORDER BY id").fetchall()
    assert rows == [(1, "succeeded", "issue:o/r#1"), (2, "running", None), (3, "queued", "issue:o/r#1")]
    engine.dispose()


def test_a_run_left_running_before_leases_existed_is_stranded_after_an_hour(database):
    run = new_run(database)
    with database.session() as session:
        stored = session.get(Run, run.id)
        stored.status, stored.updated_at = "running", utcnow() - timedelta(minutes=30)
        session.add(stored)
        session.commit()
    assert leases.reap(database, max_attempts=3) == [] and not leases.is_stranded(load(database, run.id))
    with database.session() as session:
        stored = session.get(Run, run.id)
        stored.updated_at = utcnow() - timedelta(hours=2)
        session.add(stored)
        session.commit()
    assert leases.is_stranded(load(database, run.id))
    [reaped] = leases.reap(database, max_attempts=3)
    assert reaped.requeued and load(database, run.id).status == "queued"


def test_opening_a_ci_run_while_one_of_its_signature_is_active_opens_none(database):
    from app.db.models import FailureSignature
    from app.db.signatures import DbSignatureStore

    fingerprint = "a" * 64
    active = new_run(database, kind="ci_failure", issue=None, params={"fingerprint": fingerprint})
    with database.session() as session:
        session.add(FailureSignature(repo="o/r", fingerprint=fingerprint, count=2))
        session.commit()
    store = DbSignatureStore(database)
    assert store.open_ci_run("o/r", fingerprint, target="t", params={"fingerprint": fingerprint}) is None
    with database.session() as session:
        assert [r.id for r in session.exec(select(Run).where(Run.kind == "ci_failure"))] == [active.id]


def dead_pid() -> int:
    """The pid of a process that has exited (and was reaped): nothing runs under it now."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_local_run_whose_process_died_fails_with_its_reason_instead_of_being_resumed(database):
    """`scrub demo` runs its pipeline in its own process: no worker can resume it (it holds the
    offline stand-in for GitHub), so once its lease lapses the reaper fails it, saying why."""
    run = new_run(database)
    owner = leases.local_owner()
    assert owner.startswith(leases.LOCAL_OWNER) and leases.claim(database, run.id, owner, 60)
    with database.session() as session:
        session.add(StageEvent(run_id=run.id, stage="reproduce", status="running"))
        session.commit()
    expire(database, run.id)
    [reaped] = leases.reap(database, max_attempts=3)
    stored = load(database, run.id)
    assert not reaped.requeued and stored.status == "failed" and stored.ended_at is not None
    assert "the local process that ran it" in stored.error and "stopped" in stored.error
    again = new_run(database)  # the next `scrub demo` of the same issue: no UNIQUE error
    assert again.id != run.id


def test_a_local_run_of_a_dead_process_on_this_host_is_failed_at_once(database):
    run = new_run(database)
    owner = f"{leases.LOCAL_OWNER}{leases.socket.gethostname()}:{dead_pid()}"
    assert leases.claim(database, run.id, owner, 600)  # a live lease, but nobody behind it
    alive = new_run(database, issue=2)
    assert leases.claim(database, alive.id, leases.local_owner(), 600)
    assert leases.fail_abandoned_local_runs(database) == [run.id]
    stored = load(database, run.id)
    assert stored.status == "failed" and "stopped" in stored.error
    assert load(database, alive.id).status == "running"  # this process is alive: left alone
