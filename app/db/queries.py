"""The service's queries, in one place. Each takes an open session (or connection); callers commit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, func, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from app.db.models import Artifact, Delivery, Run, RunLogLine, RunStatus, StageEvent, utcnow
from app.domain import ACTIVE, RunKind


@dataclass
class RunDetail:
    run: Run
    stages: list[StageEvent]
    artifacts: list[Artifact]


def record_delivery(connection: Connection, delivery_id: str, event: str, action: str | None, repo: str | None,
                    outcome: str, event_key: str | None = None) -> bool:
    """Insert the delivery (uncommitted); False when GitHub already delivered this id, or a
    delivery about the same `event_key` (the same comment, the same workflow run attempt) was.

    One `INSERT ... ON CONFLICT DO NOTHING` on SQLite and Postgres, on a Core connection (the
    webhook path is hot): no read first, and a redelivery racing in from another thread or
    process is recognised by the database (either unique index).
    """
    values = {"id": delivery_id, "event": event, "action": action, "repo": repo, "received_at": utcnow(),
              "outcome": outcome[:200], "event_key": event_key}
    dialect = connection.dialect.name
    if dialect in ("sqlite", "postgresql"):
        insert = sqlite_insert if dialect == "sqlite" else postgresql_insert
        statement = insert(Delivery).values(**values).on_conflict_do_nothing()
        return connection.execute(statement.returning(Delivery.id)).first() is not None  # rowcount: -1 on psycopg
    try:
        with connection.begin_nested():
            connection.execute(Delivery.__table__.insert().values(**values))  # type: ignore[attr-defined]
    except IntegrityError:
        return False
    return True


def set_delivery_outcome(session: Session, delivery_id: str, outcome: str, run_id: int | None = None) -> None:
    statement = update(Delivery).where(col(Delivery.id) == delivery_id).values(outcome=outcome[:200], run_id=run_id)
    session.exec(statement)  # type: ignore[call-overload]


def active_key(kind: str, repo: str, issue: int | None, params: dict[str, Any] | None) -> str | None:
    """What "one active run per target" counts: the issue, or the CI failure's fingerprint."""
    if kind == RunKind.issue and repo and issue:
        return f"issue:{repo.lower()}#{issue}"
    if kind == RunKind.progression and repo and issue:  # one re-check of a bug at a time
        return f"progression:{repo.lower()}:{(params or {}).get('target', 'issue')}#{issue}"
    fingerprint = (params or {}).get("fingerprint")
    if kind == RunKind.ci_failure and isinstance(fingerprint, str) and fingerprint:
        return f"ci:{repo.lower()}:{fingerprint}"[:300]
    return None


def create_run(session: Session, **fields: Any) -> Run:
    """Insert a run (flushed, uncommitted). A second active run of the same issue or CI
    signature raises `IntegrityError` (the partial unique index `uq_run_active_key`)."""
    run = Run(**fields)
    run.active_key = active_key(run.kind, run.repo, run.issue, run.params)
    session.add(run)
    session.flush()
    return run


def active_issue_run(session: Session, repo: str, issue: int) -> Run | None:
    """The issue's run that is still queued, running or awaiting approval, if any."""
    query = (
        select(Run)
        .where(Run.kind == "issue", Run.repo == repo, Run.issue == issue, col(Run.status).in_(ACTIVE))
        .order_by(col(Run.id).desc())
    )
    return session.exec(query).first()


def latest_issue_run(session: Session, repo: str, issue: int, status: str | None = None, *,
                     kind: str = "issue") -> Run | None:
    """The issue's newest run of `kind` (with `status`, when given)."""
    query = select(Run).where(Run.kind == kind, Run.repo == repo, Run.issue == issue)
    if status is not None:
        query = query.where(Run.status == status)
    return session.exec(query.order_by(col(Run.id).desc())).first()


def list_runs(session: Session, limit: int = 100, offset: int = 0) -> list[Run]:
    """Newest first."""
    query = select(Run).order_by(col(Run.created_at).desc(), col(Run.id).desc()).offset(offset).limit(limit)
    return list(session.exec(query))


LOG_ARTIFACT = "log"  # the name under which a run's log is shown beside its artifacts
LOG_TAIL_LINES = 2000


def run_log(session: Session, run_id: int, tail: int = LOG_TAIL_LINES) -> list[RunLogLine]:
    """The last `tail` lines of a run's log, oldest first."""
    query = select(RunLogLine).where(RunLogLine.run_id == run_id).order_by(col(RunLogLine.id).desc()).limit(tail)
    return list(reversed(list(session.exec(query))))


def log_text(lines: list[RunLogLine]) -> str:
    return "".join(f"{line.at.strftime('%H:%M:%S')} {line.line}\n" for line in lines)


def run_detail(session: Session, run_id: int) -> RunDetail | None:
    """The run, its stage events and artifacts; its log tail is presented as a `log` artifact
    (not stored as one: the lines are rows)."""
    run = session.get(Run, run_id)
    if run is None:
        return None
    stages = session.exec(select(StageEvent).where(StageEvent.run_id == run_id).order_by(col(StageEvent.id)))
    artifacts = list(session.exec(select(Artifact).where(Artifact.run_id == run_id).order_by(col(Artifact.id))))
    lines = run_log(session, run_id)
    if lines:
        artifacts.append(Artifact(run_id=run_id, name=LOG_ARTIFACT, kind="log", content=log_text(lines),
                                  created_at=lines[0].at))
    return RunDetail(run, list(stages), artifacts)


def stage_events(session: Session, run_id: int) -> list[StageEvent]:
    return list(session.exec(select(StageEvent).where(StageEvent.run_id == run_id).order_by(col(StageEvent.id))))


def latest_stage_event(session: Session, run_id: int, stage: str) -> StageEvent | None:
    query = select(StageEvent).where(StageEvent.run_id == run_id, StageEvent.stage == stage)
    return session.exec(query.order_by(col(StageEvent.id).desc())).first()


def next_attempt(session: Session, run_id: int, stage: str) -> int:
    query = select(func.count()).select_from(StageEvent).where(StageEvent.run_id == run_id, StageEvent.stage == stage)
    return int(session.exec(query).one()) + 1


def delete_stage_events(session: Session, run_id: int, stages: list[str] | None = None) -> None:
    """Forget the run's stage events (all of them, or those of `stages`) so they run again."""
    statement = delete(StageEvent).where(col(StageEvent.run_id) == run_id)
    if stages is not None:
        statement = statement.where(col(StageEvent.stage).in_(stages))
    session.exec(statement)  # type: ignore[call-overload]


def upsert_artifact(session: Session, run_id: int, name: str, kind: str, content: str) -> Artifact:
    artifact = find_artifact(session, run_id, name)
    if artifact is None:
        artifact = Artifact(run_id=run_id, name=name)
    artifact.kind, artifact.content, artifact.created_at = kind, content, utcnow()
    session.add(artifact)
    return artifact


def touch(run: Run) -> Run:
    run.updated_at = utcnow()
    return run


def find_artifact(session: Session, run_id: int, name: str) -> Artifact | None:
    return session.exec(select(Artifact).where(Artifact.run_id == run_id, Artifact.name == name)).first()


def fail_run(session: Session, run_id: int, error: str) -> None:
    run = session.get(Run, run_id)
    if run is not None:
        run.status, run.error, run.ended_at = RunStatus.failed, error, utcnow()
        session.add(touch(run))
