"""The log ingest's typed state (`ci_ingest`).

Stored as JSON by the runner (app.pipelines.state); the status page reads `failures.json`,
an artifact of the `record` stage, not this state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.engine.cilogs.archive import Failure
from app.pipelines.state import PipelineState

Json = dict[str, Any]


@dataclass
class IngestState(PipelineState):
    """`ci_ingest`: a failed workflow run's jobs and logs, its failures, what was counted."""

    DECODE = {"failures": lambda rows: [Failure.from_dict(row) for row in rows]}

    logs_path: str = ""
    jobs: list[Json] = field(default_factory=list)  # id, name, conclusion
    workflow_run: Json = field(default_factory=dict)  # id, attempt, head_sha, head_branch, name, html_url
    failures: list[Failure] = field(default_factory=list)  # the failures of failed jobs
    log_jobs: list[Json] = field(default_factory=list)
    spawned_runs: list[int] = field(default_factory=list)
    verdict: str | None = None
    signatures: list[Json] = field(default_factory=list)
