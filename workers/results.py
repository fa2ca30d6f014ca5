"""The trusted side records a repro job's result (`workers/jobs.py`, step 3) and goes on.

A result counts only if its run still waits on that job (`app.db.jobs.take_back`); then every
stage record is checked against the pipeline before anything is stored: the stages must be
the next ones the pipeline itself routes to the job's queue, in order, each with a stage
status and an output its state class accepts. A result that fails a check is refused whole
and the run fails with the reason (the repro host is the one that lied or broke). Otherwise the
records, artifacts and log lines are stored (through the redactor, as any stage's), and the
run goes on here: the next stages on this worker, or another job.
"""

from __future__ import annotations

import logging
from typing import Any

from app.db import jobs as job_leases
from app.db import leases
from app.db.jobs import JobStage
from app.db.models import FINISHED, Run, RunStatus
from app.domain import DEFAULT_QUEUE, StageStatus, failed_on_their_own
from app.pipelines.base import Stage
from app.pipelines.state import plain
from workers.execute import WorkerServices, _execute, short_error
from workers.handoff import send_job
from workers.jobs import ReproResult, StageRecord, job_owner
from workers.lease import Heartbeat, LeasedRunContext, LeaseLost, new_owner

log = logging.getLogger(__name__)

MAX_JOB_RETRIES = 4
LINE_LIMIT = 20_000  # characters of one log line kept (as `DbRunContext.log`)
RECORD_STATUSES = (StageStatus.done, StageStatus.skipped, StageStatus.failed, StageStatus.waiting)


class ResultRefused(ValueError):
    """A result that does not fit the run's pipeline."""


def check_records(stages: list[Stage], done: dict[str, Any], queue: str, records: list[StageRecord],
                  failed: frozenset[str] | set[str] = frozenset()) -> None:
    """Raise `ResultRefused` unless `records` are the stages the pipeline would run next on
    `queue`, from the state `done` leaves, with outputs their state classes accept (`failed`:
    the stages recorded failed, of which the optional ones the run went on without)."""
    data: dict[str, Any] = {}
    for stage in stages:
        if stage.name in done:
            data.update(done[stage.name])
    pending = [s for s in stages if s.name not in done and not (s.optional and s.name in failed)]
    for index, record in enumerate(records):
        if index >= len(pending) or pending[index].name != record.stage:
            raise ResultRefused(f"stage {record.stage!r} is not the pipeline's next stage")
        stage = pending[index]
        if stage.queue(stage.state.load(data)) != queue:
            raise ResultRefused(f"stage {stage.name!r} does not run on {queue}")
        if record.status not in RECORD_STATUSES or not isinstance(record.output, dict):
            raise ResultRefused(f"stage {stage.name!r}: a record with status {record.status!r}")
        if record.status == StageStatus.failed and not stage.optional and index != len(records) - 1:
            raise ResultRefused(f"required stage {stage.name!r} failed, yet the job went on")
        try:
            stage.state.check_output(stage.name, plain(record.output))
        except Exception as exc:
            raise ResultRefused(f"stage {stage.name!r}: {exc}") from None
        data.update(record.output)


def record_result(data: dict[str, Any], services: WorkerServices) -> str:
    """Store a job's result if its run still waits on it; then go on with the run here."""
    try:
        result = ReproResult.from_dict(data)
    except (TypeError, ValueError, KeyError) as exc:
        log.warning("a repro result that is not one was dropped: %s", exc)
        return "malformed result dropped"
    with services.database.session() as session:
        run = session.get(Run, result.run_id)
    if run is None or run.status in FINISHED:
        return "run gone or finished: result dropped"
    lease_s = float(services.settings.lease_s)
    owner = new_owner()
    if not job_leases.take_back(services.database, run.id, job_owner(result.job_id), owner, lease_s):
        return "stale result dropped"  # cancelled, reaped and sent again, or a duplicate
    heartbeat = Heartbeat(services.database, run.id, owner, lease_s)
    ctx = LeasedRunContext(services.database, run, services.settings,
                           github_factory=lambda: services.github_for(run.installation_id),
                           on_spawned=lambda spawned: [services.enqueuer.run_pipeline(c) for c in spawned],
                           owner=owner, heartbeat=heartbeat)
    queue = run.queue
    ctx.set_queue(DEFAULT_QUEUE)  # the run is back on the trusted side, which runs its trusted stages only
    try:
        with heartbeat:
            return _apply(run, ctx, queue, result, services)
    except LeaseLost as exc:
        log.warning("%s; stopping", exc)
        return "lease lost"
    finally:
        leases.release(services.database, run.id, owner)


def _apply(run: Run, ctx: LeasedRunContext, queue: str, result: ReproResult, services: WorkerServices) -> str:
    stages = services.stages_for(run.kind)
    try:
        failed = failed_on_their_own(ctx.stage_summaries())
        check_records(stages, ctx.completed_stages(), queue, result.stages, failed)
    except ResultRefused as exc:
        ctx.set_status(RunStatus.failed, error=f"the {queue} worker's result was refused: {exc}")
        return RunStatus.failed
    redact = ctx.redact
    stages = [JobStage(r.stage, r.status, redact.text(r.summary), redact.value(plain(r.output)), float(r.started),
                       float(r.ended)) for r in result.stages]
    artifacts = [(name[:200], kind[:30], redact.text(content)) for name, kind, content in result.artifacts]
    lines = [redact.text(str(line))[:LINE_LIMIT] for line in result.log]
    try:
        job_leases.record_all(services.database, run.id, stages, artifacts, lines)
    except Exception:  # nothing was stored: the task tries again, and the job holds the run meanwhile
        job_leases.give_back(services.database, run.id, ctx.owner, job_owner(result.job_id), float(services.settings.lease_s))
        raise
    if result.outcome == "failed":
        return _failed(run, ctx, queue, result, services)
    if result.outcome == "end":
        ctx.set_status(str(result.status), result.verdict)
        return str(result.status)
    if result.outcome == "wait":
        ctx.set_status(RunStatus.awaiting_approval, result.verdict)
        return RunStatus.awaiting_approval
    if not result.stages:
        ctx.set_status(RunStatus.failed, error=f"the {queue} worker ran no stage of its queue")
        return RunStatus.failed
    try:
        return _execute(run, ctx, services)  # the next stages: here, or another job
    except LeaseLost:
        raise
    except Exception as exc:  # transient (`_execute` fails the run on anything else): resume it afresh
        leases.release(services.database, run.id, ctx.owner)
        services.enqueuer.run_pipeline(run.id)
        return f"recorded; resumes on a trusted worker after {short_error(exc)}"


def _failed(run: Run, ctx: LeasedRunContext, queue: str, result: ReproResult, services: WorkerServices) -> str:
    retries = int(result.retries)
    if result.transient and retries < MAX_JOB_RETRIES:
        stage = result.stages[-1].stage if result.stages else "the next stage"
        ctx.log(f"{stage} on {queue}: {result.error}; trying again")
        countdown = float(services.settings.retry_delay_s) * 2 ** retries
        return send_job(run, ctx, queue, stage, services, retries=retries + 1, countdown_s=countdown)
    error = result.error or "the repro worker's stage failed"
    ctx.set_status(RunStatus.failed, error=error if not result.transient else f"gave up after {retries} retries: {error}")
    return RunStatus.failed
