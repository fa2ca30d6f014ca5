"""How the API and the workers put work on the queues. Tasks are sent by name, so a producer
never imports the task code; tests inject a `RecordingEnqueuer` and need no broker."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from celery import Celery

from app.domain import DEFAULT_QUEUE

RUN_PIPELINE_TASK = "scrub.run_pipeline"
HANDLE_COMMENT_TASK = "scrub.handle_comment"
PROGRESSION_TICK_TASK = "scrub.progression_tick"  # Celery beat's (workers/schedule.py)


class Enqueuer(Protocol):
    def run_pipeline(self, run_id: int, queue: str = DEFAULT_QUEUE) -> None: ...

    def handle_comment(self, **command: Any) -> None:
        """`command`, `repo`, `issue`, `user`, `installation_id`, `issue_url` (plain values)."""


class CeleryEnqueuer:
    def __init__(self, app: Celery) -> None:
        self.app = app

    def run_pipeline(self, run_id: int, queue: str = DEFAULT_QUEUE) -> None:
        self.app.send_task(RUN_PIPELINE_TASK, args=[run_id], queue=queue)

    def handle_comment(self, **command: Any) -> None:
        self.app.send_task(HANDLE_COMMENT_TASK, kwargs=command, queue=DEFAULT_QUEUE)


@dataclass
class RecordingEnqueuer:
    """Remembers what would have been sent."""

    runs: list[tuple[int, str]] = field(default_factory=list)
    comments: list[dict[str, Any]] = field(default_factory=list)

    def run_pipeline(self, run_id: int, queue: str = DEFAULT_QUEUE) -> None:
        self.runs.append((run_id, queue))

    def handle_comment(self, **command: Any) -> None:
        self.comments.append(command)
