"""The repro worker's side of the trust split (`workers/jobs.py`): run a job's stages, no
database, no GitHub credential, and answer with a `ReproResult`.

`run_job(job, settings, beat)` runs the job's kind's pipeline on a `JobContext`: an in-memory
context seeded with the stages finished before the job, whose queue is the job's. So it runs
exactly the stages its queue serves and stops at the first stage of another queue (a handoff
back) or at the end. Its `github` is a `RepoAccess`: the job's clone URL for the job's
repository, and nothing else. While it runs, `beat(stage)` is called every third of the lease.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from app.domain import RunStatus
from app.pipelines import registry
from app.pipelines.base import Finished, Handoff, Stage, run_pipeline
from app.pipelines.memory import MemoryRunContext
from app.pipelines.memory import StageRecord as MemoryStage
from app.settings import Settings
from workers.execute import is_transient, short_error
from workers.jobs import ReproJob, ReproResult, StageRecord

log = logging.getLogger(__name__)


class NoGitHubHere(PermissionError):
    """A repro worker holds no GitHub credential: only the job's clone URL."""


@dataclass
class RepoAccess:
    """What a repro stage may ask of GitHub: a clone URL of the job's repository, read-only.

    Anything else raises `NoGitHubHere` naming the stage that asked (`stage_of`): a stage that
    reads GitHub belongs on the default queue (`tests/pipelines/test_repro_github.py` checks
    every kind's repro stages for such reads). It is a `PermissionError`, not an
    `AttributeError`, so `hasattr(ctx.github, ...)` raises too instead of quietly saying no."""

    repo: str
    url: str | None
    stage_of: Callable[[], str] = lambda: ""

    def clone_url(self, repo: str) -> str:
        if repo.lower() != self.repo.lower():
            raise NoGitHubHere(f"this repro job may only read {self.repo}, not {repo}")
        if self.url is None:
            raise NoGitHubHere("GitHub is not configured on the trusted workers: no checkout")
        return self.url

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        stage = self.stage_of()
        raise NoGitHubHere(f"{f'stage {stage!r}' if stage else 'a stage'} asked GitHub for {name} on a repro worker, "
                           f"which holds no GitHub credential (a clone URL of {self.repo} only): a repro worker has "
                           "no GitHub access, so that read belongs in a stage on the default queue")


@dataclass
class JobContext(MemoryRunContext):
    """A `MemoryRunContext` seeded with the finished stages; it knows the stage it is at."""

    current: str = ""
    seeded: int = 0
    spawned: list[int] = field(default_factory=list)

    def stage_started(self, stage: str) -> None:
        self.current = stage
        super().stage_started(stage)

    def enqueue_runs(self, run_ids: list[int]) -> None:
        raise NoGitHubHere("a repro worker cannot start runs")

    def new_stages(self) -> list[StageRecord]:
        return [StageRecord(r.stage, r.status, r.summary, r.output, r.started, r.ended or r.started)
                for r in self.stages[self.seeded:]]


def job_context(job: ReproJob, settings: Settings) -> JobContext:
    seed = [MemoryStage(d.stage, d.status, d.summary, d.output, 0.0, d.seconds) for d in job.done]
    access = RepoAccess(job.repo, job.clone_url)
    ctx = JobContext(run_id=job.run_id, queue=job.queue, github=access,
                     settings=settings, params=dict(job.params), installation_id=job.installation_id,
                     stages=seed, seeded=len(seed), current=job.stage)
    access.stage_of = lambda: ctx.current
    return ctx


class Beating:
    """Calls `beat(stage)` every `interval_s` until stopped (a daemon thread)."""

    def __init__(self, beat: Callable[[str], None], ctx: JobContext, interval_s: float) -> None:
        self.beat, self.ctx, self.interval_s = beat, ctx, interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="scrub-job-beat", daemon=True)

    def __enter__(self) -> Beating:
        self._send()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._send()

    def _send(self) -> None:
        try:
            self.beat(self.ctx.current)
        except Exception as exc:  # the broker may be restarting: the next beat may get through
            log.warning("job beat not sent: %s", exc)


def run_job(job: ReproJob, settings: Settings, beat: Callable[[str], None],
            stages_for: Callable[[str], list[Stage]] = registry.stages_for) -> ReproResult:
    """Run the job's stages; never raises for what a stage does (it is in the result)."""
    ctx = job_context(job, settings)
    outcome: dict[str, Any] = {}
    try:
        with Beating(beat, ctx, max(job.lease_s / 3, 0.2)):
            finished = run_pipeline(stages_for(job.kind), ctx)
    except Exception as exc:  # a required stage failed (recorded by run_pipeline), or the kind is missing
        log.exception("repro job %s of run %s failed", job.job_id, job.run_id)
        outcome = {"outcome": "failed", "error": short_error(exc), "transient": is_transient(exc)}
    else:
        if isinstance(finished, Handoff):
            outcome = {"outcome": "handoff"}
        elif isinstance(finished, Finished) and finished.status == RunStatus.awaiting_approval:
            outcome = {"outcome": "wait", "verdict": finished.verdict}
        else:
            outcome = {"outcome": "end", "status": finished.status, "verdict": finished.verdict}
    artifacts = [(name, kind, content) for name, (kind, content) in ctx.artifacts.items()]
    return ReproResult(job.job_id, job.run_id, ctx.new_stages(), artifacts, list(ctx.lines), retries=job.retries,
                       **outcome)
