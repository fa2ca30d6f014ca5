"""The shared parts of the CI reproduction job (`ci_failure`) and the dispatch job (`improve`).

- `CIJob`: what the job is about (repo, failing commit, failing test, the CI failure), built
  from a `Run(kind=ci_failure)`'s params (app/engine/cilogs/README.md) or from dispatch inputs, and
  kept in the pipeline state as a plain dict so every stage (on any worker) sees the same.
- Phase clock: seed 002's time limits (reproduce, fix, PR), read from settings. A phase starts
  with its first stage on the worker that does the work (reproduce: checkout; fix; PR:
  publish), so time spent queued does not count; the start is a wall-clock time stored in the
  state, so a stage resumed on another worker counts from the phase's real start.
- Halting: a stage that must stop the job (a phase past its limit, nothing to reproduce)
  records a `Halt` in the state; later stages skip and the report stage says why.
- `PhasedState`: the fields every phased job's state has (the phase clocks, the halt); the CI
  job's and the fuzz job's states extend it.
- The checkout (mirror + worktree) and the sandbox, built from settings.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from app.engine.git.repo import MirrorCache
from app.engine.sandbox.runner import Limits, Sandbox, SandboxSpec
from app.engine.sandbox.treerun import TreeRunner
from app.pipelines.base import CPU_QUEUE, GPU_QUEUE, RunContext, Stage, StageResult, State
from app.pipelines.state import PipelineState, from_known
from app.settings import Settings

if TYPE_CHECKING:
    from app.pipelines.ci.state import CIState

# Each phase's time limit, from its SCRUB_PHASE_*_S setting.
PHASE_LIMITS: dict[str, Callable[[Settings], float]] = {
    "reproduce": lambda settings: settings.phase_reproduce_s,
    "fix": lambda settings: settings.phase_fix_s,
    "pr": lambda settings: settings.phase_pr_s,
}
_GPU_WORDS = ("cuda", "gpu", "nccl", "cudnn", "rocm")


@dataclass
class CIJob:
    repo: str
    head_sha: str = ""
    ref: str = ""  # a branch or tag to resolve when no commit is known (dispatch)
    test: str = ""  # the failing test id as CI printed it
    exception: str = ""
    message: str = ""
    kind: str = ""
    signature: str = ""
    job_name: str = ""
    run_url: str = ""
    base: str = "main"
    deterministic_hint: bool | None = None
    existing_test: str = ""
    prompt: str = ""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CIJob:
        return from_known(cls, data)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_failure(cls, repo: str, failure: dict[str, Any], workflow_run: dict[str, Any], **extra: Any) -> CIJob:
        """From a `Failure.to_dict()` and a workflow run's JSON (ingest params or a run URL)."""
        return cls(
            repo=repo,
            head_sha=workflow_run.get("head_sha", ""),
            test=failure.get("test", ""),
            exception=failure.get("exception", ""),
            message=failure.get("message", ""),
            kind=failure.get("kind", ""),
            signature=failure.get("signature", ""),
            job_name=failure.get("job", ""),
            run_url=workflow_run.get("html_url", ""),
            base=workflow_run.get("head_branch") or "main",
            **extra,
        )

    @property
    def short_signature(self) -> str:
        if self.signature:
            return self.signature[:12]
        seed = f"{self.repo}\0{self.test}\0{self.exception}".encode()
        return hashlib.sha256(seed).hexdigest()[:12]

    @property
    def branch(self) -> str:
        return f"scrub/{self.short_signature}"

    @property
    def failure_line(self) -> str:
        return f"{self.exception}: {self.message}".strip(": ") or "a CI failure"

    @property
    def needs_gpu(self) -> bool:
        text = f"{self.job_name} {self.test} {self.exception} {self.message}".lower()
        return any(word in text for word in _GPU_WORDS)


def job_of(state: CIState) -> CIJob:
    """The job; every stage after the first runs only once the first stage made it."""
    if state.job is None:
        raise RuntimeError("the CI job's state has no job (its first stage has not run)")
    return state.job


def repro_queue(state: CIState) -> str:
    """repro-gpu when the failure names CUDA/GPU (job name, test id or message), else repro-cpu."""
    return GPU_QUEUE if state.job is not None and state.job.needs_gpu else CPU_QUEUE


# -- phase clock and halting -----------------------------------------------------------------


@dataclass(frozen=True)
class PhaseClock:
    phase: str
    started: float  # wall clock (time.time), stored in the state
    limit_s: float

    @property
    def remaining_s(self) -> float:
        return self.started + self.limit_s - time.time()

    @property
    def expired(self) -> bool:
        return self.remaining_s <= 0

    def state(self) -> State:
        return {f"phase_{self.phase}_started": self.started}

    def exceeded(self, where: str, detail: str = "") -> dict[str, str]:
        """`halt(...)` keywords: the reason, this phase and the stage `where` it ran out."""
        reason = f"the {self.phase} phase passed its {self.limit_s:g} s limit during {where}"
        return {"phase": self.phase, "stage": where, "reason": reason + (f" ({detail})" if detail else "")}


@dataclass(frozen=True)
class Halt:
    """Why a job stopped early, and what its report's status is (Partial or Failed)."""

    reason: str
    status: str
    phase: str = ""  # the phase whose time limit stopped it, if any
    stage: str = ""  # where that happened

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Halt:
        return cls(**{k: str(v) for k, v in data.items() if k in {f.name for f in fields(cls)}})


@dataclass
class PhasedState(PipelineState):
    """What every phased job (CI failure, dispatch, fuzz) keeps besides its own findings."""

    phase_reproduce_started: float | None = None
    phase_fix_started: float | None = None
    phase_pr_started: float | None = None
    halt: Halt | None = None

    def phase_started(self, phase: str) -> float | None:
        return {"reproduce": self.phase_reproduce_started, "fix": self.phase_fix_started,
                "pr": self.phase_pr_started}[phase]


PHASED_DECODE = {"halt": Halt.from_dict}


def phase_clock(ctx: RunContext, state: PhasedState, phase: str) -> PhaseClock:
    """The clock of `phase`; started now if no earlier stage of the phase started it."""
    limit = float(PHASE_LIMITS[phase](ctx.settings))
    started = state.phase_started(phase) or time.time()
    return PhaseClock(phase, float(started), limit)


def halted(state: PhasedState) -> StageResult | None:
    """A skip result when an earlier stage halted the job, else None."""
    if state.halt:
        return StageResult(summary=f"skipped: {state.halt.reason}", skipped=True)
    return None


def halt(summary: str, reason: str, *, status: str, extra: State | None = None, **where: str) -> StageResult:
    """End the job's work here; `status` is the report's (Partial / Failed)."""
    output = {"halt": Halt(reason=reason, status=status, **where), **(extra or {})}
    return StageResult(summary=summary, output=output)


# -- checkout and sandbox ------------------------------------------------------------------


def mirror_cache(ctx: RunContext) -> MirrorCache:
    return MirrorCache(Path(ctx.settings.data_dir) / "git" / "mirrors")


def remote_for(ctx: RunContext, repo: str) -> str:
    """Where to fetch from and push to: always the installation's repository on the configured
    GitHub (`GitHubPort.clone_url`). Never a run parameter: dispatch inputs are untrusted, and a
    `remote` among them must not choose where the token is sent or what gets checked out.

    Offline (the CLI: no GitHub, the person at the terminal named a local repository with
    `--repo`), the `remote` parameter the CLI set is the repository itself."""
    if ctx.github is None:
        remote = ctx.params.get("remote")
        if not remote:
            raise RuntimeError("no GitHub and no local repository to fetch from")
        return str(remote)
    return ctx.github.clone_url(repo)


def worktree_path(ctx: RunContext) -> Path:
    return Path(ctx.settings.data_dir) / "git" / "worktrees" / f"run-{ctx.run_id}"


def ensure_checkout(ctx: RunContext, job: CIJob) -> Path:
    """The run's worktree at the failing commit (made again if this worker has none)."""
    cache = mirror_cache(ctx)
    cache.sync(job.repo, remote_for(ctx, job.repo), job.head_sha)
    return cache.worktree(job.repo, job.head_sha, worktree_path(ctx))


def drop_checkout(ctx: RunContext, job: CIJob) -> None:
    """Remove this worker's worktree of the run, if it has one (the mirror stays cached)."""
    mirror_cache(ctx).remove_worktree(job.repo, worktree_path(ctx))


def tree_runner(ctx: RunContext, worktree: Path, cpu_s: int | None = None) -> TreeRunner:
    """A sandboxed runner over `worktree`. `cpu_s` bounds CPU seconds per run (default: from
    the timeout, for one busy thread; a multi-process stress run needs more)."""
    settings = ctx.settings
    spec = SandboxSpec(
        kind=settings.resolved_sandbox,
        limits=Limits(memory_mb=settings.sandbox_memory_mb, cpu_s=cpu_s),
        gpu=bool(settings.gpu),
    )
    return TreeRunner(Sandbox(spec), worktree)


def run_timeout(ctx: RunContext, clock: PhaseClock) -> float:
    """Per-run timeout: the configured repro timeout, cut to what is left of the phase."""
    return max(min(float(ctx.settings.repro_timeout), clock.remaining_s), 0.1)
