"""A run whose stages are on a repro worker (the trust split, `workers/jobs.py`): its lease.

The repro worker has no database; the trusted side keeps the run's lease for it, owned by
`job:<job id>`, each step a compare-and-swap on that owner:

- `hand_off`: the trusted worker that held the run gives its lease to the job (queued on the
  repro queue; no expiry while it waits for a repro worker: the reaper leaves queued runs).
- `beat`: the job is alive (a heartbeat through the broker): running, the lease renewed, and
  the stage it is at shown as running (so the status page and the reaper see it).
- `take_back`: a trusted worker takes the run from the job to record its result; False when
  the job no longer holds it (cancelled, reaped and sent again, finished meanwhile).
- `record_all`: what the job's result holds (stages with their own times, artifacts, log
  lines), in one transaction; `give_back` returns the lease to the job when that failed.

A job whose beats stop is reaped like any lost worker (`app.db.leases.reap`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import update
from sqlmodel import col

from app.db import queries
from app.db.models import Run, RunLogLine, RunStatus, StageEvent, utcnow
from app.db.session import Database
from app.domain import StageStatus

_WAITING = (RunStatus.queued, RunStatus.running)


def hand_off(database: Database, run_id: int, owner: str, job_owner: str, queue: str) -> bool:
    """The lease of `owner` becomes `job_owner`'s; the run waits on `queue`."""
    with database.session() as session:
        result = session.exec(update(Run).where(  # type: ignore[call-overload]
            col(Run.id) == run_id, col(Run.lease_owner) == owner, col(Run.status) == RunStatus.running)
            .values(status=RunStatus.queued, queue=queue, lease_owner=job_owner, lease_expires_at=None,
                    updated_at=utcnow()))
        session.commit()
    return result.rowcount == 1


def beat(database: Database, run_id: int, job_owner: str, stage: str, lease_s: float) -> bool:
    """Renew the job's lease (the run is running from its first beat); show `stage` running."""
    now = utcnow()
    with database.session() as session:
        result = session.exec(update(Run).where(  # type: ignore[call-overload]
            col(Run.id) == run_id, col(Run.lease_owner) == job_owner, col(Run.status).in_(_WAITING))
            .values(status=RunStatus.running, lease_expires_at=now + timedelta(seconds=lease_s), updated_at=now))
        if result.rowcount != 1:
            session.rollback()
            return False
        run = session.get(Run, run_id)
        if run is not None and run.started_at is None:
            run.started_at = now
            session.add(run)
        latest = queries.latest_stage_event(session, run_id, stage) if stage else None
        if stage and (latest is None or latest.status != StageStatus.running):
            attempt = queries.next_attempt(session, run_id, stage)
            session.add(StageEvent(run_id=run_id, stage=stage, status=StageStatus.running, attempt=attempt))
        session.commit()
    return True


def take_back(database: Database, run_id: int, job_owner: str, owner: str, lease_s: float) -> bool:
    """`owner` (a trusted worker) holds the run again, if the job still did."""
    now = utcnow()
    with database.session() as session:
        result = session.exec(update(Run).where(  # type: ignore[call-overload]
            col(Run.id) == run_id, col(Run.lease_owner) == job_owner, col(Run.status).in_(_WAITING))
            .values(status=RunStatus.running, lease_owner=owner, lease_expires_at=now + timedelta(seconds=lease_s),
                    updated_at=now))
        session.commit()
    return result.rowcount == 1


def give_back(database: Database, run_id: int, owner: str, job_owner: str, lease_s: float) -> bool:
    """Undo `take_back` (the result could not be stored: its task will try again)."""
    with database.session() as session:
        result = session.exec(update(Run).where(  # type: ignore[call-overload]
            col(Run.id) == run_id, col(Run.lease_owner) == owner)
            .values(lease_owner=job_owner, lease_expires_at=utcnow() + timedelta(seconds=lease_s)))
        session.commit()
    return result.rowcount == 1


def _at(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, tz=UTC)


@dataclass(frozen=True)
class JobStage:
    """A stage the job ran, as the job timed it (seconds since the epoch)."""

    stage: str
    status: str
    summary: str
    output: dict
    started: float
    ended: float


def record_all(database: Database, run_id: int, stages: list[JobStage], artifacts: list[tuple[str, str, str]],
               lines: list[str]) -> None:
    """Everything a job's result holds, in one transaction: each stage completes the running
    event its beats made (or is added), then the artifacts and the log lines."""
    with database.session() as session:
        for done in stages:
            event = queries.latest_stage_event(session, run_id, done.stage)
            if event is None or event.status != StageStatus.running:
                event = StageEvent(run_id=run_id, stage=done.stage, status=done.status,
                                   attempt=queries.next_attempt(session, run_id, done.stage))
            event.status, event.summary, event.output = done.status, done.summary, done.output
            event.started_at, event.ended_at = _at(done.started), _at(done.ended)
            session.add(event)
            session.flush()
        for name, kind, content in artifacts:
            queries.upsert_artifact(session, run_id, name, kind, content)
            session.flush()
        for line in lines:
            session.add(RunLogLine(run_id=run_id, line=line))
        session.commit()
