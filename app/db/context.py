"""A `RunContext` (see app/pipelines/base.py) that records everything in the database.

Workers build one per task. Each call opens its own short session, so what a stage records
is visible on the status page at once and survives a worker that dies mid-stage.

Runs a stage asks to start (`StageResult.enqueue`) go to `on_spawned` once the stage is
recorded as done.
"""

from __future__ import annotations

import logging
import os
from functools import cached_property
from typing import Any, Callable

from structlog.contextvars import bind_contextvars, unbind_contextvars

from app.db import queries
from app.db.models import FINISHED, Run, RunLogLine, RunStatus, StageEvent, utcnow

State = dict[str, Any]


def _seconds(event: StageEvent) -> float | None:
    if event.started_at is None or event.ended_at is None:
        return None
    started, ended = event.started_at, event.ended_at
    if (started.tzinfo is None) != (ended.tzinfo is None):  # SQLite returns naive values
        started, ended = started.replace(tzinfo=None), ended.replace(tzinfo=None)
    return round((ended - started).total_seconds(), 3)
from app.db.session import Database
from app.domain import STAGE_FINISHED, StageStatus, StageSummary
from app.db.signatures import DbSignatureStore
from app.db.run_list import title_of
from app.redact import GITHUB_WRITES, RedactedWrites, redactor_for

log = logging.getLogger(__name__)
_LINE_LIMIT = 20_000  # characters of one log line kept


class DbRunContext:
    def __init__(
        self,
        database: Database,
        run: Run,
        settings: Any,
        github_factory: Callable[[], Any] | None = None,
        on_spawned: Callable[[list[int]], None] | None = None,
    ) -> None:
        assert run.id is not None
        self.database = database
        self.settings = settings
        self.run_id: int = run.id
        self.queue: str = run.queue
        self.params: dict[str, Any] = dict(run.params or {})
        # Also on hand for pipelines, though not part of the RunContext port:
        self.kind, self.repo, self.issue, self.target = run.kind, run.repo, run.issue, run.target
        self.installation_id = run.installation_id
        self._github_factory = github_factory
        self._on_spawned = on_spawned
        self.redact = redactor_for(settings, os.environ)  # everything stored or written passes through it

    @cached_property
    def signatures(self) -> DbSignatureStore:
        return DbSignatureStore(self.database)

    @cached_property
    def github(self) -> Any:
        """Built on first use: a run that never talks to GitHub needs no credentials."""
        github = self._github_factory() if self._github_factory else None
        return RedactedWrites(github, self.redact, GITHUB_WRITES) if github is not None else None

    def completed_stages(self) -> dict[str, State]:
        with self.database.session() as session:
            latest: dict[str, Any] = {}
            for event in queries.stage_events(session, self.run_id):
                latest[event.stage] = event
        return {name: dict(e.output or {}) for name, e in latest.items() if e.status in STAGE_FINISHED}

    def stage_summaries(self) -> list[StageSummary]:
        with self.database.session() as session:
            latest: dict[str, StageEvent] = {}
            for event in queries.stage_events(session, self.run_id):
                latest[event.stage] = event
        return [StageSummary(e.stage, e.status, e.summary or "", _seconds(e)) for e in latest.values()]

    def stage_started(self, stage: str) -> None:
        bind_contextvars(stage=stage)  # on every log line until the stage finishes (app.logs)
        log.info("stage %s started", stage, extra={"run_id": self.run_id})
        with self.database.session() as session:
            attempt = queries.next_attempt(session, self.run_id, stage)
            session.add(StageEvent(run_id=self.run_id, stage=stage, status=StageStatus.running, attempt=attempt))
            session.commit()

    def stage_finished(self, stage: str, status: str, summary: str, output: State) -> None:
        summary, output = self.redact.text(summary), self.redact.value(output)
        with self.database.session() as session:
            event = queries.latest_stage_event(session, self.run_id, stage)
            if event is None or event.status != StageStatus.running:
                event = StageEvent(run_id=self.run_id, stage=stage, status=status)
            event.status, event.summary, event.output, event.ended_at = status, summary, output, utcnow()
            session.add(event)
            title = title_of(output or {})
            run = session.get(Run, self.run_id) if title else None
            if run is not None and not run.title:
                run.title = title  # a run created before its issue was fetched learns its title now
                session.add(run)
            session.commit()
        self.log(f"stage {stage}: {status}" + (f" ({summary})" if summary else ""))
        log.info("stage %s %s", stage, status, extra={"run_id": self.run_id, "status": status, "summary": summary[:500]})
        unbind_contextvars("stage")

    def save_artifact(self, name: str, kind: str, content: str) -> None:
        with self.database.session() as session:
            queries.upsert_artifact(session, self.run_id, name, kind, self.redact.text(content))
            session.commit()

    def set_status(self, status: str, verdict: str | None = None, error: str | None = None) -> None:
        with self.database.session() as session:
            run = session.get(Run, self.run_id)
            if run is None:
                return
            run.status = status
            if verdict is not None:
                run.verdict = self.redact.text(verdict)[:500]
            if error is not None:
                run.error = self.redact.text(error)
            if status == RunStatus.running and run.started_at is None:
                run.started_at = utcnow()
            if status in FINISHED:
                run.ended_at = utcnow()
            session.add(queries.touch(run))
            session.commit()

    def set_queue(self, queue: str) -> None:
        """Record the queue the run continues on (before a handoff is enqueued)."""
        with self.database.session() as session:
            run = session.get(Run, self.run_id)
            if run is not None:
                run.queue, self.queue = queue, queue
                session.add(queries.touch(run))
                session.commit()

    def enqueue_runs(self, run_ids: list[int]) -> None:
        if self._on_spawned:
            self._on_spawned([int(run_id) for run_id in run_ids])

    def log(self, message: str) -> None:
        """Append one row: the cost of a line does not grow with the log (it used to rewrite
        the whole log artifact per line)."""
        message = self.redact.text(message)
        with self.database.session() as session:
            session.add(RunLogLine(run_id=self.run_id, line=message[:_LINE_LIMIT]))
            session.commit()
