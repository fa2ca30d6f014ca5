"""The Celery tasks: receive ids, build the services of this worker process, call `execute`."""

from __future__ import annotations

from functools import partial
from typing import Any

from celery import Celery, shared_task
from structlog.contextvars import bound_contextvars

from app.db.session import database_for
from app.github.connect import github_client
from app.domain import CommandRequest, RunStatus
from app.settings import get_settings
from workers.enqueue import HANDLE_COMMENT_TASK, RUN_PIPELINE_TASK, CeleryEnqueuer
from workers.execute import WorkerServices, execute_command, execute_run, fail_run, is_transient

MAX_RETRIES = 4


def worker_services(app: Celery) -> WorkerServices:
    settings = get_settings()
    return WorkerServices(
        settings=settings,
        database=database_for(settings.resolved_database_url),
        enqueuer=CeleryEnqueuer(app),
        github_for=partial(github_client, settings),
    )


@shared_task(name=RUN_PIPELINE_TASK, bind=True, max_retries=MAX_RETRIES)
def run_pipeline(self: Any, run_id: int) -> str:
    with bound_contextvars(run_id=run_id):  # on every log line of this task (app.logs)
        return _run_pipeline(self, run_id)


def _run_pipeline(self: Any, run_id: int) -> str:
    services = worker_services(self.app)
    try:
        return execute_run(run_id, services)
    except Exception as exc:
        if not is_transient(exc):
            raise
        if self.request.retries >= MAX_RETRIES:
            fail_run(run_id, services, f"gave up after {MAX_RETRIES} retries: {type(exc).__name__}: {exc}")
            return RunStatus.failed
        raise self.retry(exc=exc, countdown=services.settings.retry_delay_s * 2**self.request.retries)


@shared_task(name=HANDLE_COMMENT_TASK, bind=True, max_retries=MAX_RETRIES)
def handle_comment(
    self: Any, command: str, repo: str, issue: int, user: str, installation_id: int | None = None, issue_url: str = "",
    args: str = "",
) -> str:
    return _handle_comment(self, CommandRequest(command, repo, issue, user, installation_id, issue_url, args))


def _handle_comment(self: Any, request: CommandRequest) -> str:
    services = worker_services(self.app)
    try:
        return execute_command(request, services)
    except Exception as exc:
        if not is_transient(exc):
            raise
        raise self.retry(exc=exc, countdown=services.settings.retry_delay_s * 2**self.request.retries)
