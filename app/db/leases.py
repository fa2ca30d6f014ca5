"""Leases on running runs, and the reaper that resumes the runs whose worker died.

A worker `claim`s a run before running it: one `UPDATE ... WHERE` that succeeds only if the run
is queued, or running under a lease that has expired, so two deliveries of the same message
(Redis redelivers, the reaper re-enqueues) never run it twice at once. While it runs, the worker
`renew`s the lease (a heartbeat thread); at the end it `release`s it.

`reap` finds running runs whose lease expired (the worker was killed, the machine lost): each is
put back in the queue it was on, from its first unfinished stage (the stage that was running is
recorded as failed, "worker lost"), or failed with a reason once it has been lost
`max_attempts` times. Each step is a compare-and-swap, so many reapers may run at once.

A run that a CLI process runs itself (`scrub demo`: its pipeline, in its own process, with an
offline stand-in for GitHub) holds a lease too, owned by `local:<host>:<pid>`. No worker can
resume it, so when it lapses the run fails, saying that the process stopped; and on the same
host a dead pid is enough to fail it at once (`fail_abandoned_local_runs`).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import and_, or_, update
from sqlmodel import Session, col, select

from app.db import queries
from app.db.models import Run, RunStatus, StageEvent, utcnow
from app.domain import WORKER_LOST, StageStatus
from app.db.session import Database

LOST = WORKER_LOST  # a lost worker's stage is failed with this and runs again on resume
# A run left running without a lease: by a worker from before leases existed (no task may run
# longer than the hard time limit, 46 minutes), or after a transient error whose retry message
# was lost. After an hour it is surely stranded.
UNLEASED_STRANDED_AFTER = timedelta(hours=1)
LOCAL_OWNER = "local:"  # a CLI process runs the run itself: no worker may resume it


def local_owner() -> str:
    """The lease owner of a run this process runs itself."""
    return f"{LOCAL_OWNER}{socket.gethostname()[:80]}:{os.getpid()}"


def _local_process(owner: str | None) -> tuple[str, int] | None:
    if not owner or not owner.startswith(LOCAL_OWNER):
        return None
    host, _, pid = owner[len(LOCAL_OWNER):].rpartition(":")
    return (host, int(pid)) if pid.isdigit() else None


def _stopped_reason(owner: str) -> str:
    found = _local_process(owner)
    where = f" (pid {found[1]} on {found[0]})" if found else ""
    return f"the local process that ran it{where} stopped before it finished; run it again"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def aware(moment: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; every stored one is UTC."""
    return moment.replace(tzinfo=UTC) if moment is not None and moment.tzinfo is None else moment


def is_stranded(run: Run, now: datetime | None = None) -> bool:
    """Running, but its worker stopped renewing the lease (or never had one, long ago)."""
    now = now or utcnow()
    if run.status != RunStatus.running:
        return False
    expires = aware(run.lease_expires_at)
    if expires is None:
        return (aware(run.updated_at) or now) < now - UNLEASED_STRANDED_AFTER
    return expires < now


def claim(database: Database, run_id: int, owner: str, lease_s: float) -> bool:
    """Take the run for `owner` (status running, lease until now + lease_s); False when someone
    else holds a live lease or the run is not waiting to run."""
    now = utcnow()
    runnable = or_(
        col(Run.status) == RunStatus.queued,
        and_(col(Run.status) == RunStatus.running,
             or_(col(Run.lease_expires_at).is_(None), col(Run.lease_expires_at) < now, col(Run.lease_owner) == owner)),
    )
    values = {"status": RunStatus.running, "lease_owner": owner, "lease_expires_at": now + timedelta(seconds=lease_s),
              "updated_at": now}
    with database.session() as session:
        result = session.exec(update(Run).where(col(Run.id) == run_id, runnable).values(**values))  # type: ignore[call-overload]
        run = session.get(Run, run_id)
        if result.rowcount == 1 and run is not None and run.started_at is None:
            run.started_at = now
            session.add(run)
        session.commit()
    return result.rowcount == 1


def renew(database: Database, run_id: int, owner: str, lease_s: float) -> bool:
    """Extend the lease; False when it is no longer ours (reaped, cancelled, finished)."""
    now = utcnow()
    with database.session() as session:
        result = session.exec(  # type: ignore[call-overload]
            update(Run)
            .where(col(Run.id) == run_id, col(Run.lease_owner) == owner, col(Run.status) == RunStatus.running)
            .values(lease_expires_at=now + timedelta(seconds=lease_s))
        )
        session.commit()
    return result.rowcount == 1


def holds(database: Database, run_id: int, owner: str) -> bool:
    """Whether `owner` still holds the run (a cancel or a reaper takes it away)."""
    with database.session() as session:
        run = session.get(Run, run_id)
    return run is not None and run.lease_owner == owner and run.status == RunStatus.running


def release(database: Database, run_id: int, owner: str) -> None:
    """Let the lease go (`updated_at` moves on: an unleased running run is reaped an hour later)."""
    with database.session() as session:
        session.exec(  # type: ignore[call-overload]
            update(Run).where(col(Run.id) == run_id, col(Run.lease_owner) == owner)
            .values(lease_owner=None, lease_expires_at=None, updated_at=utcnow())
        )
        session.commit()


def restart(session: Session, run: Run) -> None:
    """A stranded run starts over (a new trigger label): all stages again, same run id."""
    assert run.id is not None
    queries.delete_stage_events(session, run.id)
    run.status, run.verdict, run.error, run.ended_at, run.attempts = RunStatus.queued, None, None, None, 0
    run.lease_owner, run.lease_expires_at = None, None
    session.add(queries.touch(run))


def strand(database: Database, run_id: int) -> None:
    """Put a requeued run back as running with an expired lease (it could not be enqueued)."""
    with database.session() as session:
        session.exec(update(Run).where(col(Run.id) == run_id, col(Run.status) == RunStatus.queued)  # type: ignore[call-overload]
                     .values(status=RunStatus.running, lease_owner="reaper", lease_expires_at=utcnow()))
        session.commit()


@dataclass(frozen=True)
class Reaped:
    run_id: int
    queue: str
    requeued: bool  # False: failed after too many lost workers


def reap(database: Database, max_attempts: int, now: datetime | None = None) -> list[Reaped]:
    """Requeue (or fail) every run whose lease expired; the caller enqueues the requeued ones."""
    now = now or utcnow()
    unleased_before = now - UNLEASED_STRANDED_AFTER
    with database.session() as session:
        expired = list(session.exec(select(Run).where(col(Run.status) == RunStatus.running, or_(
            col(Run.lease_expires_at) < now,
            and_(col(Run.lease_expires_at).is_(None), col(Run.updated_at) < unleased_before)))))
    reaped = []
    for run in expired:
        outcome = _reap_one(database, run, max_attempts, now)
        if outcome is not None:
            reaped.append(outcome)
    return reaped


def fail_abandoned_local_runs(database: Database) -> list[int]:
    """Fail, now, the running runs held by a local process of this host that is gone."""
    host = socket.gethostname()[:80]
    with database.session() as session:
        held = list(session.exec(select(Run).where(col(Run.status) == RunStatus.running,
                                                   col(Run.lease_owner).startswith(LOCAL_OWNER))))
    failed = []
    for run in held:
        found = _local_process(run.lease_owner)
        if found and found[0] == host and not _pid_alive(found[1]) and _fail_local(database, run, utcnow()):
            failed.append(run.id)
    return failed


def _fail_local(database: Database, run: Run, now: datetime) -> bool:
    reason = _stopped_reason(run.lease_owner or "")
    with database.session() as session:
        result = session.exec(update(Run).where(  # type: ignore[call-overload]
            col(Run.id) == run.id, col(Run.status) == RunStatus.running, col(Run.lease_owner) == run.lease_owner)
            .values(status=RunStatus.failed, ended_at=now, error=reason, lease_owner=None, lease_expires_at=None,
                    updated_at=now))
        if result.rowcount != 1:
            session.rollback()
            return False
        session.exec(update(StageEvent).where(  # type: ignore[call-overload]
            col(StageEvent.run_id) == run.id, col(StageEvent.status) == StageStatus.running)
            .values(status=StageStatus.failed, summary="stopped: the local process ended", ended_at=now))
        session.commit()
    return True


def _reap_one(database: Database, run: Run, max_attempts: int, now: datetime) -> Reaped | None:
    assert run.id is not None
    attempts = run.attempts + 1
    local = _local_process(run.lease_owner) is not None
    give_up = attempts >= max_attempts or local
    values: dict = {"lease_owner": None, "lease_expires_at": None, "attempts": attempts, "updated_at": now}
    if local:
        values.update(status=RunStatus.failed, ended_at=now, error=_stopped_reason(run.lease_owner or ""))
    elif give_up:
        values.update(status=RunStatus.failed, ended_at=now,
                      error=f"{LOST} {attempts} times (SCRUB_MAX_ATTEMPTS={max_attempts}); retry to run it again")
    else:
        values.update(status=RunStatus.queued)
    same_lease = (col(Run.lease_expires_at) < now) if run.lease_expires_at is not None else and_(
        col(Run.lease_expires_at).is_(None), col(Run.updated_at) == run.updated_at)
    with database.session() as session:
        result = session.exec(update(Run).where(  # type: ignore[call-overload]
            col(Run.id) == run.id, col(Run.status) == RunStatus.running, same_lease).values(**values))
        if result.rowcount != 1:  # renewed, finished or reaped by someone else meanwhile
            session.rollback()
            return None
        session.exec(update(StageEvent).where(  # type: ignore[call-overload]
            col(StageEvent.run_id) == run.id, col(StageEvent.status) == StageStatus.running)
            .values(status=StageStatus.failed, summary=f"{LOST} (attempt {attempts})", ended_at=now))
        session.commit()
    return Reaped(run.id, run.queue, not give_up)
