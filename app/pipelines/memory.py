"""An in-memory `RunContext`: the CLI runs pipelines on it, tests inspect it."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

from app.domain import STAGE_FINISHED, RunStatus, SignatureStore, StageStatus, StageSummary
from app.pipelines.base import DEFAULT_QUEUE, State
from app.redact import Redactor, redactor_for
from app.settings import Settings


@dataclass
class StageRecord:
    stage: str
    status: str
    summary: str = ""
    output: State = field(default_factory=dict)
    started: float = 0.0
    ended: float | None = None


@dataclass
class MemoryRunContext:
    run_id: int = 0
    queue: str = DEFAULT_QUEUE
    github: Any = None  # a GitHubPort, or None offline
    settings: Settings = field(default_factory=Settings)
    params: dict[str, Any] = field(default_factory=dict)
    signatures: SignatureStore | None = None
    installation_id: int | None = None
    echo: Callable[[str], None] | None = None
    stages: list[StageRecord] = field(default_factory=list)
    artifacts: dict[str, tuple[str, str]] = field(default_factory=dict)
    status: str = RunStatus.queued
    verdict: str | None = None
    error: str | None = None
    lines: list[str] = field(default_factory=list)
    enqueued: list[int] = field(default_factory=list)  # runs a stage asked to start

    @cached_property
    def redact(self) -> Redactor:
        """What is recorded here is what the DB context would store: secrets masked."""
        return redactor_for(self.settings, os.environ)

    def completed_stages(self) -> dict[str, State]:
        return {r.stage: r.output for r in self.stages if r.status in STAGE_FINISHED}

    def stage_summaries(self) -> list[StageSummary]:
        latest = {r.stage: r for r in self.stages}
        return [StageSummary(r.stage, r.status, r.summary, round(r.ended - r.started, 3) if r.ended else None)
                for r in sorted(latest.values(), key=lambda r: r.started)]

    def stage_started(self, stage: str) -> None:
        self.stages.append(StageRecord(stage, StageStatus.running, started=time.time()))
        self.log(f"stage {stage}: started")

    def stage_finished(self, stage: str, status: str, summary: str, output: State) -> None:
        record = next(r for r in reversed(self.stages) if r.stage == stage)
        summary, output = self.redact.text(summary), self.redact.value(output)
        record.status, record.summary, record.output, record.ended = status, summary, output, time.time()
        self.log(f"stage {stage}: {status}" + (f" ({summary})" if summary else ""))

    def save_artifact(self, name: str, kind: str, content: str) -> None:
        self.artifacts[name] = (kind, self.redact.text(content))

    def set_status(self, status: str, verdict: str | None = None, error: str | None = None) -> None:
        self.status, self.verdict, self.error = status, verdict and self.redact.text(verdict), error and self.redact.text(error)

    def enqueue_runs(self, run_ids: list[int]) -> None:
        self.enqueued.extend(run_ids)

    def log(self, message: str) -> None:
        message = self.redact.text(message)
        self.lines.append(message)
        if self.echo:
            self.echo(message)


def stderr_echo(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
