"""The Celery tasks: receive ids, build the services of this worker process, call `execute`.

`run_pipeline`, `handle_comment` and `repro_result` run on trusted workers (`default`: the
database, GitHub); `repro_job` on repro workers (`repro-cpu`, `repro-gpu`), which need neither
(`workers/jobs.py`)."""

from __future__ import annotations

import logging
import time
from dataclasses import asdict
from functools import partial
from typing import Any

from celery import Celery, shared_task
from structlog.contextvars import bound_contextvars

from app.command_seal import unsealed_reason
from app.db.session import database_for
from app.domain import DEFAULT_QUEUE, CommandRequest, RunStatus
from app.github.connect import github_client
from app.settings import get_settings
from workers.beats import send_beat
from workers.enqueue import (
    HANDLE_COMMENT_TASK,
    PROGRESSION_TICK_TASK,
    REPRO_JOB_TASK,
    REPRO_RESULT_TASK,
    RUN_PIPELINE_TASK,
    CeleryEnqueuer,
)
from workers.execute import (
    WorkerServices,
    execute_command,
    execute_run,
    fail_run,
    is_transient,
)
from workers.jobs import Beat, ReproJob, bounded
from workers.repro import run_job
from workers.results import record_result

MAX_RETRIES = 4

log = logging.getLogger(__name__)


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
    if (getattr(self.request, "delivery_info", None) or {}).get("routing_key", DEFAULT_QUEUE) != DEFAULT_QUEUE:
        # Sent to a repro queue by an older version: only trusted workers run pipelines.
        CeleryEnqueuer(self.app).run_pipeline(run_id)
        return "forwarded to the default queue"
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
    args: str = "", seal: str = "",
) -> str:
    return _handle_comment(self, CommandRequest(command, repo, issue, user, installation_id, issue_url, args), seal)


def _handle_comment(self: Any, request: CommandRequest, seal: str = "") -> str:
    services = worker_services(self.app)
    if why := unsealed_reason(services.settings.webhook_secret, asdict(request), seal):
        log.warning("refused /scrub %s on %s#%s by %s: %s", request.command, request.repo, request.issue,
                    request.user, why)
        return f"refused: {why}"
    try:
        return execute_command(request, services)
    except Exception as exc:
        if not is_transient(exc):
            raise
        raise self.retry(exc=exc, countdown=services.settings.retry_delay_s * 2**self.request.retries)


@shared_task(name=REPRO_JOB_TASK, bind=True)
def repro_job(self: Any, job: dict) -> str:
    """On a repro worker: run the job's stages (no database, no GitHub credential), answer."""
    parsed = ReproJob.from_dict(job)
    with bound_contextvars(run_id=parsed.run_id):
        def beat(stage: str) -> None:
            send_beat(self.app, Beat(parsed.job_id, parsed.run_id, stage, parsed.lease_s))

        result = bounded(run_job(parsed, get_settings(), beat))
        send_result(CeleryEnqueuer(self.app), result.to_dict())
        return result.outcome


def send_result(enqueuer: CeleryEnqueuer, result: dict, attempts: int = 5) -> None:
    """Send the result, waiting out a broker restart (1, 2, 4, 8 s); raises after `attempts`
    (the job's lease then lapses and the run resumes on a trusted worker)."""
    for attempt in range(attempts):
        try:
            enqueuer.repro_result(result)
            return
        except Exception:
            if attempt == attempts - 1:
                raise
            time.sleep(2**attempt)


@shared_task(name=REPRO_RESULT_TASK, bind=True, max_retries=MAX_RETRIES)
def repro_result(self: Any, result: dict) -> str:
    """On a trusted worker: record a repro job's result, go on with its run."""
    with bound_contextvars(run_id=result.get("run_id")):
        services = worker_services(self.app)
        try:
            return record_result(result, services)
        except Exception as exc:
            if not is_transient(exc):
                raise
            raise self.retry(exc=exc, countdown=services.settings.retry_delay_s * 2**self.request.retries)


@shared_task(name=PROGRESSION_TICK_TASK, bind=True)
def progression_tick(self: Any) -> int:
    """Celery beat's tick: start the progression re-checks that are due (workers/schedule.py)."""
    from workers.schedule import tick

    services = worker_services(self.app)
    return len(tick(services.settings, services.database, services.enqueuer))
