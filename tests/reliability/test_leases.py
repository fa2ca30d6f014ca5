"""A worker killed mid-run (`kill -9` of the Celery main process): after a restart the reaper
resumes the run at its first unfinished stage and it finishes. Real `scrub worker` processes,
the embedded filesystem broker (which never redelivers: only the reaper can save the run) and
SQLite; then the same on Redis and Postgres."""

from __future__ import annotations

import os
import signal

import pytest

from app.db import queries
from app.db.migrate import upgrade
from app.db.models import Run
from app.db.session import Database
from app.settings import Settings
from tests.reliability.lease_harness import alive, children, scrub_env, start, stop_group, wait_for
from workers.celery_app import create_celery
from workers.enqueue import CeleryEnqueuer

FAST_LEASES = {"lease_s": "2", "reaper_interval_s": "0.5", "max_attempts": "3"}


def stage_rows(database: Database, run_id: int) -> list[tuple[str, str, int]]:
    with database.session() as session:
        return [(e.stage, e.status, e.attempt) for e in queries.stage_events(session, run_id)]


def held_run(database: Database, hold: str) -> int:
    with database.session() as session:
        run = queries.create_run(session, kind="selftest", repo="o/r", trigger="test",
                                 params={"hold_until": hold, "hold_max_s": 90})
        session.commit()
        return run.id


def status(database: Database, run_id: int) -> str:
    with database.session() as session:
        return session.get(Run, run_id).status


def kill_minus_nine_and_resume(tmp_path, database: Database, settings: Settings, env: dict[str, str]) -> None:
    log, hold = tmp_path / "workers.log", tmp_path / "go"
    run_id = held_run(database, str(hold))
    first = start(["worker", "-c", "1"], env, log)
    second = None
    try:
        CeleryEnqueuer(create_celery(settings)).run_pipeline(run_id)
        wait_for("the work stage to start", lambda: ("work", "running", 1) in stage_rows(database, run_id), log)
        pool = children(first.pid)
        os.kill(first.pid, signal.SIGKILL)  # the Celery main process, mid-stage
        first.wait(30)
        # Whatever the pool child does without its parent, it must not finish the run by itself.
        for pid in pool:
            wait_for(f"pool child {pid} to go", lambda: not alive(pid), log, bound_s=60)
        assert status(database, run_id) == "running"  # stranded, as on main
        hold.touch()
        second = start(["worker", "-c", "1"], env, log)
        wait_for("the run to finish", lambda: status(database, run_id) in ("succeeded", "failed"), log)
        assert status(database, run_id) == "succeeded", log.read_text()[-4000:]
        rows = stage_rows(database, run_id)
        assert ("work", "failed", 1) in rows and ("work", "done", 2) in rows and ("report", "done", 1) in rows
        with database.session() as session:
            stored = session.get(Run, run_id)
        assert stored.attempts == 1 and stored.lease_owner is None
    finally:
        stop_group(first, signal.SIGKILL)
        if second is not None:
            stop_group(second)


@pytest.mark.services
def test_kill_minus_nine_on_the_embedded_broker(tmp_path):
    data = tmp_path / "data"
    settings = Settings(data_dir=data)
    settings.ensure_data_dir()
    upgrade(settings.resolved_database_url)
    database = Database(settings.resolved_database_url)
    try:
        kill_minus_nine_and_resume(tmp_path, database, settings, scrub_env(data, **FAST_LEASES))
    finally:
        database.dispose()


@pytest.mark.services
def test_kill_minus_nine_on_redis_and_postgres(tmp_path, redis_server, postgres_url):
    upgrade(postgres_url)
    data = tmp_path / "data"
    settings = Settings(data_dir=data, database_url=postgres_url, broker_url=redis_server)
    database = Database(postgres_url)
    env = scrub_env(data, database_url=postgres_url, broker_url=redis_server, **FAST_LEASES)
    try:
        kill_minus_nine_and_resume(tmp_path, database, settings, env)
    finally:
        database.dispose()


def restart_mid_run(tmp_path, database: Database, settings: Settings, env: dict[str, str], restart) -> None:
    """A run held in its `work` stage while `restart()` bounces a server; then it must finish."""
    log, hold = tmp_path / "workers.log", tmp_path / "go"
    run_id = held_run(database, str(hold))
    worker = start(["worker", "-c", "1"], env, log)
    try:
        CeleryEnqueuer(create_celery(settings)).run_pipeline(run_id)
        wait_for("the work stage to start", lambda: ("work", "running", 1) in stage_rows(database, run_id), log)
        restart()
        hold.touch()
        wait_for("the run to finish", lambda: _status_or_none(database, run_id) in ("succeeded", "failed"), log)
        assert status(database, run_id) == "succeeded", log.read_text()[-4000:]
        assert [s for s, st, _ in stage_rows(database, run_id) if st == "done"] == ["greet", "work", "report"]
    finally:
        stop_group(worker)


def _status_or_none(database: Database, run_id: int) -> str | None:
    try:
        return status(database, run_id)
    except Exception:  # the database is still coming back
        return None


@pytest.mark.services
def test_a_postgres_restart_mid_run(tmp_path, own_postgres, redis_server):
    upgrade(own_postgres.url)
    data = tmp_path / "data"
    settings = Settings(data_dir=data, database_url=own_postgres.url, broker_url=redis_server)
    database = Database(own_postgres.url)
    env = scrub_env(data, database_url=own_postgres.url, broker_url=redis_server, **FAST_LEASES)
    try:
        restart_mid_run(tmp_path, database, settings, env, own_postgres.restart)
    finally:
        database.dispose()


@pytest.mark.services
def test_a_redis_restart_mid_run(tmp_path, own_redis, postgres_url):
    upgrade(postgres_url)
    data = tmp_path / "data"
    settings = Settings(data_dir=data, database_url=postgres_url, broker_url=own_redis.url)
    database = Database(postgres_url)
    env = scrub_env(data, database_url=postgres_url, broker_url=own_redis.url, **FAST_LEASES)
    try:
        restart_mid_run(tmp_path, database, settings, env, own_redis.restart)
    finally:
        database.dispose()
