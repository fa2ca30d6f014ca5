"""The trusted side's handoff (`workers/jobs.py`, step 1): a run's stages go to a repro queue
as a `ReproJob`, with no credential but a clone URL that can only read the run's repository.

Runs on a trusted worker, which holds the run's lease: the lease becomes the job's
(`app.db.jobs.hand_off`), then the job is sent. A job that cannot be sent raises (the task is
retried, and a retry resends it with a new id: the old one, if it got out, is dropped).
"""

from __future__ import annotations

import logging
from typing import Any

from app.db import jobs as job_leases
from app.db import leases
from app.db.models import Run
from app.domain import StageStatus
from app.github.connect import GitHubNotConfigured
from workers.jobs import DoneStage, ReproJob, job_owner, new_job_id

log = logging.getLogger(__name__)


def done_stages(ctx: Any) -> list[DoneStage]:
    """The run's finished stages, as a repro stage may read them (outputs, summaries); and the
    failed ones, so the job does not run again an optional stage the run went on without."""
    outputs = ctx.completed_stages()
    return [DoneStage(s.stage, s.status, s.summary, outputs.get(s.stage, {}), s.duration_s)
            for s in ctx.stage_summaries() if s.stage in outputs or s.status == StageStatus.failed]


def read_only_clone_url(services: Any, run: Run) -> str | None:
    """A clone URL of the run's repository that cannot write (None: no GitHub configured)."""
    if not run.repo:
        return None
    try:
        github = services.github_for(run.installation_id)
    except GitHubNotConfigured:
        return None
    return None if github is None else github.read_clone_url(run.repo)


def send_job(run: Run, ctx: Any, queue: str, stage: str, services: Any, retries: int = 0,
             countdown_s: float | None = None) -> str:
    """Give the run's lease to a new job on `queue` and send it; what the task returns."""
    job = ReproJob(
        job_id=new_job_id(), run_id=ctx.run_id, kind=run.kind, queue=queue, stage=stage,
        params=dict(ctx.params), installation_id=run.installation_id, done=done_stages(ctx), repo=run.repo,
        clone_url=read_only_clone_url(services, run), lease_s=float(services.settings.lease_s), retries=retries,
    )
    ctx.set_queue(queue)
    if not job_leases.hand_off(services.database, ctx.run_id, ctx.owner, job_owner(job.job_id), queue):
        return "lease lost before the handoff"
    ctx.log(f"stage {stage} continues on queue {queue}")
    try:
        services.enqueuer.repro_job(job.to_dict(), queue, countdown_s)
    except Exception:  # the broker is down: the reaper resends it once it is back
        leases.strand(services.database, ctx.run_id)
        raise
    return f"handed off to {queue}"
