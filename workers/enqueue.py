"""How the API and the workers put work on the queues. Tasks are sent by name, so a producer
never imports the task code; tests inject a `RecordingEnqueuer` and need no broker.

A run's pipeline always runs on a trusted worker (`default`), whatever queue the run waits on:
the stages of a repro queue travel as jobs (`repro_job`, `workers/jobs.py`), whose results come
back on `default` (`repro_result`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from celery import Celery

from app.domain import DEFAULT_QUEUE

RUN_PIPELINE_TASK = "scrub.run_pipeline"
HANDLE_COMMENT_TASK = "scrub.handle_comment"
REPRO_JOB_TASK = "scrub.repro_job"  # workers/jobs.py
REPRO_RESULT_TASK = "scrub.repro_result"
PROGRESSION_TICK_TASK = "scrub.progression_tick"  # Celery beat's (workers/schedule.py)


class Enqueuer(Protocol):
    def run_pipeline(self, run_id: int, queue: str = DEFAULT_QUEUE) -> None:
        """Run (or resume) the run's pipeline; `queue`: where the run waits (the task itself
        goes to `default`: only trusted workers run pipelines)."""

    def repro_job(self, job: dict[str, Any], queue: str, countdown_s: float | None = None) -> None:
        """A `ReproJob` (as a dict) for a repro worker on `queue`."""

    def repro_result(self, result: dict[str, Any]) -> None:
        """A `ReproResult` (as a dict) for a trusted worker."""

    def handle_comment(self, **command: Any) -> None:
        """`command`, `repo`, `issue`, `user`, `installation_id`, `issue_url` (plain values)."""


class CeleryEnqueuer:
    def __init__(self, app: Celery) -> None:
        self.app = app

    def run_pipeline(self, run_id: int, queue: str = DEFAULT_QUEUE) -> None:
        self.app.send_task(RUN_PIPELINE_TASK, args=[run_id], queue=DEFAULT_QUEUE)

    def repro_job(self, job: dict[str, Any], queue: str, countdown_s: float | None = None) -> None:
        self.app.send_task(REPRO_JOB_TASK, args=[job], queue=queue, countdown=countdown_s)

    def repro_result(self, result: dict[str, Any]) -> None:
        self.app.send_task(REPRO_RESULT_TASK, args=[result], queue=DEFAULT_QUEUE)

    def handle_comment(self, **command: Any) -> None:
        self.app.send_task(HANDLE_COMMENT_TASK, kwargs=command, queue=DEFAULT_QUEUE)


@dataclass
class RecordingEnqueuer:
    """Remembers what would have been sent."""

    runs: list[tuple[int, str]] = field(default_factory=list)
    comments: list[dict[str, Any]] = field(default_factory=list)
    jobs: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)

    def run_pipeline(self, run_id: int, queue: str = DEFAULT_QUEUE) -> None:
        self.runs.append((run_id, queue))

    def repro_job(self, job: dict[str, Any], queue: str, countdown_s: float | None = None) -> None:
        self.jobs.append((job, queue))

    def repro_result(self, result: dict[str, Any]) -> None:
        self.results.append(result)

    def handle_comment(self, **command: Any) -> None:
        self.comments.append(command)
