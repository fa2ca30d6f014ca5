"""The tables. Alembic migrations in `migrations/` create them; keep the two in step."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Index, Text, UniqueConstraint, text
from sqlmodel import Field, SQLModel

from app.domain import ACTIVE, FINISHED, RunKind, RunStatus, utcnow

__all__ = ["FINISHED", "RunKind", "RunStatus", "utcnow", "Delivery", "Run", "StageEvent", "Artifact", "RunLogLine", "FailureSignature",
           "FailureOccurrence", "SignatureLink"]


class Delivery(SQLModel, table=True):
    """One webhook delivery, keyed by `X-GitHub-Delivery` so a redelivery is recognised, and by
    `event_key` (the comment or workflow run it is about, `app.github.webhooks.event_key`) so
    the same signed event replayed under a new delivery id is recognised too."""

    __table_args__ = (Index("uq_delivery_event_key", "event_key", unique=True),)

    id: str = Field(primary_key=True, max_length=100)
    event: str = Field(max_length=100)
    action: str | None = Field(default=None, max_length=100)
    repo: str | None = Field(default=None, max_length=200)
    received_at: datetime = Field(default_factory=utcnow)
    outcome: str = Field(default="received", max_length=200)
    run_id: int | None = Field(default=None, foreign_key="run.id")
    event_key: str | None = Field(default=None, max_length=200)


# Runs that are queued, running or awaiting approval: at most one per `active_key`.
ACTIVE_SQL = "status IN (" + ", ".join(f"'{status.value}'" for status in ACTIVE) + ")"


class Run(SQLModel, table=True):
    __table_args__ = (
        Index("uq_run_active_key", "active_key", unique=True,
              sqlite_where=text(ACTIVE_SQL), postgresql_where=text(ACTIVE_SQL)),
    )

    id: int | None = Field(default=None, primary_key=True)
    kind: str = Field(max_length=30, index=True)
    repo: str = Field(default="", max_length=200, index=True)
    issue: int | None = Field(default=None)
    target: str = Field(default="", max_length=500)  # issue URL, workflow run URL, file
    title: str = Field(default="", max_length=300)  # the issue's or CI job's title, for the run list
    trigger: str = Field(default="", max_length=200)  # label, comment, webhook, dispatch, cli
    status: str = Field(default=RunStatus.queued, max_length=30, index=True)
    verdict: str | None = Field(default=None, max_length=500)
    queue: str = Field(default="default", max_length=30)
    installation_id: int | None = Field(default=None)
    params: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: datetime = Field(default_factory=utcnow, index=True)
    updated_at: datetime = Field(default_factory=utcnow)
    started_at: datetime | None = None
    ended_at: datetime | None = None
    # What the run is about, for "one active run per target": `issue:o/r#12`, `ci:o/r:<fingerprint>`.
    active_key: str | None = Field(default=None, max_length=300)
    # The worker that runs it holds a lease it renews; the reaper resumes a run whose lease expired.
    lease_owner: str | None = Field(default=None, max_length=200)
    lease_expires_at: datetime | None = None
    attempts: int = Field(default=0)  # times a worker was lost while running it


class StageEvent(SQLModel, table=True):
    """A stage of a run: one row per stage (and attempt), with what it produced."""

    __tablename__ = "stage_event"

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="run.id", index=True)
    stage: str = Field(max_length=60)
    status: str = Field(max_length=30)  # running, done, skipped, failed, waiting
    started_at: datetime = Field(default_factory=utcnow)
    ended_at: datetime | None = None
    summary: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    output: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    attempt: int = Field(default=1)


class Artifact(SQLModel, table=True):
    __table_args__ = (UniqueConstraint("run_id", "name", name="uq_artifact_run_name"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="run.id", index=True)
    name: str = Field(max_length=200)
    kind: str = Field(default="text", max_length=30)  # text, markdown, python, json, log, path
    content: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    path: str | None = Field(default=None, max_length=1000)
    created_at: datetime = Field(default_factory=utcnow)


class RunLogLine(SQLModel, table=True):
    """One line of a run's log, appended, never rewritten (the status page shows the tail)."""

    __tablename__ = "run_log"

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="run.id", index=True)
    at: datetime = Field(default_factory=utcnow)
    line: str = Field(sa_column=Column(Text, nullable=False))


class FailureSignature(SQLModel, table=True):
    """A CI failure fingerprint and how often it has been seen."""

    __tablename__ = "failure_signature"
    __table_args__ = (UniqueConstraint("repo", "fingerprint", name="uq_signature_repo_fp"),
                      Index("ix_failure_signature_error", "repo", "error_key"))

    id: int | None = Field(default=None, primary_key=True)
    repo: str = Field(max_length=200, index=True)
    fingerprint: str = Field(max_length=64)
    test_id: str = Field(default="", max_length=1000)
    job: str = Field(default="", max_length=500)
    kind: str = Field(default="", max_length=60)
    exception: str = Field(default="", max_length=300)
    message: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    first_seen: datetime = Field(default_factory=utcnow)
    last_seen: datetime = Field(default_factory=utcnow)
    count: int = Field(default=0)
    run_ids: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    linked_run_id: int | None = Field(default=None, foreign_key="run.id")
    # `ci`: a CI fingerprint; `issue`: the error of issues that share it (no CI run counted)
    source: str = Field(default="ci", max_length=10)
    # The error as `Class: first message line` (app.engine.verdict.same_error): what an issue's
    # observed failure is matched on ("" when too generic to match).
    error_key: str = Field(default="", max_length=500)
    flaky: bool = Field(default=False)  # passed on a rerun in CI, or the CI job found it flaky
    flaky_evidence: str = Field(default="", max_length=500)
    classification: str = Field(default="", max_length=30)  # the latest occurrence's label


class FailureOccurrence(SQLModel, table=True):
    """One failure of a signature in one attempt of a workflow run, as classified when seen
    (`app.ci_history.Occurrence`)."""

    __tablename__ = "failure_occurrence"
    __table_args__ = (
        UniqueConstraint("repo", "fingerprint", "workflow_run_id", "attempt", name="uq_occurrence"),
        Index("ix_occurrence_signature", "repo", "fingerprint"),
    )

    id: int | None = Field(default=None, primary_key=True)
    repo: str = Field(max_length=200)
    fingerprint: str = Field(max_length=64)
    workflow_run_id: int = Field(sa_column=Column(BigInteger, nullable=False))
    attempt: int = Field(default=1)
    head_sha: str = Field(default="", max_length=64)
    head_branch: str = Field(default="", max_length=300)
    event: str = Field(default="", max_length=60)
    head_repo: str = Field(default="", max_length=200)
    workflow: str = Field(default="", max_length=300)
    job: str = Field(default="", max_length=500)
    pull_requests: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    label: str = Field(default="", max_length=30)
    classification: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    ingest_run_id: int | None = Field(default=None, foreign_key="run.id")
    passed_on_rerun: bool = Field(default=False)
    seen_at: datetime = Field(default_factory=utcnow)


class SignatureLink(SQLModel, table=True):
    """An issue or pull request linked to a signature: the same failure, or the CI job's draft PR."""

    __tablename__ = "signature_link"
    __table_args__ = (UniqueConstraint("repo", "fingerprint", "kind", "number", name="uq_signature_link"),)

    id: int | None = Field(default=None, primary_key=True)
    repo: str = Field(max_length=200, index=True)
    fingerprint: str = Field(max_length=64)
    kind: str = Field(max_length=10)  # issue | pull
    number: int
    title: str = Field(default="", max_length=300)
    relation: str = Field(default="", max_length=60)
    run_id: int | None = Field(default=None, foreign_key="run.id")
    created_at: datetime = Field(default_factory=utcnow)
