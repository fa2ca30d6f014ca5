"""The build of the commit under test, for every kind that runs a repository's code (CI, fuzz).

A CI failure at commit X of pytorch/pytorch says something about X only when X's own build
reruns it; so does a fuzz seed. The `build` stage decides which torch that is
(`app.engine.envs.provider.plan_build`: a release tag's environment, the nearest nightly with
the checkout's Python overlaid, an operator's build command, or `needs-build`) and makes it
runnable on this worker (`app.engine.envs.build.prepare`: cached, pinned environments). The plan
is kept in the state (`PhasedState.build`), so every later stage, on any worker, runs the
repository's tests, the fuzzer and the fix on that build (`runnable`: the cached environment
found again, never rebuilt), and every report states it (`describe`).

`needs-build` is an outcome, not an error: the job halts with what a build would need, and
nothing runs on another build. A repository that is not PyTorch itself builds no torch: its
code runs on the worker's interpreter, and the report says which torch that has.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from app.engine.envs import BuildPlan, BuildSources, PreparedBuild, ProvisionError, plan_build, prepare
from app.engine.envs.index import IndexUnavailable, peek_version_py
from app.engine.envs.variants import TorchBuild, build_from_version_py
from app.engine.sandbox.gpu import gpu_facts
from app.pipelines.base import RunContext, StageResult
from app.pipelines.kit.checkout import ensure_checkout, mirror_cache
from app.pipelines.kit.phases import halt


class AtCommit(Protocol):
    repo: str
    head_sha: str


def envs_root(ctx: RunContext) -> Path:
    return Path(ctx.settings.data_dir) / "envs"


def wheel_cache(ctx: RunContext) -> Path:
    return Path(ctx.settings.data_dir) / "wheels"


def build_sources(ctx: RunContext) -> BuildSources:
    settings = ctx.settings
    return BuildSources(nightly_index=settings.torch_nightly_index_url, releases=settings.env_store.builds(),
                        build_command=settings.build_command, gpu=bool(settings.gpu))


@lru_cache(maxsize=4)
def interpreter_build(python: str = sys.executable) -> TorchBuild | None:
    """The torch of the worker's own interpreter, read from its `torch/version.py` (no import)."""
    if python != sys.executable:
        return None
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        return None
    try:
        return build_from_version_py((Path(spec.origin).parent / "version.py").read_text(encoding="utf-8"))
    except (OSError, ValueError, SyntaxError):
        return None


def _with_own_torch(plan: BuildPlan) -> BuildPlan:
    own = interpreter_build()
    if plan.outcome == "interpreter" and own is not None:
        plan.version, plan.git_version, plan.variant = own.version, own.git_version, own.variant
    return plan


def plan_for(ctx: RunContext, worktree: Path, job: AtCommit) -> BuildPlan:
    """The build that runs `job.head_sha`'s checkout at `worktree` (app.engine.envs.provider)."""
    mirror = mirror_cache(ctx).path_for(job.repo)
    cache = wheel_cache(ctx)
    plan = plan_build(worktree, mirror, job.head_sha, build_sources(ctx), lambda wheel: peek_version_py(wheel, cache))
    return _with_own_torch(plan)


def _prepare(ctx: RunContext, plan: BuildPlan, commit: str) -> PreparedBuild:
    settings = ctx.settings
    return prepare(plan, commit=commit, envs_root=envs_root(ctx), wheel_cache=wheel_cache(ctx),
                   index_url=settings.torch_nightly_index_url, build_command=settings.build_command)


def build_stage(ctx: RunContext, job: AtCommit, *, next_stage: str) -> StageResult:
    """Plan and prepare the commit's build; `needs-build` (or a build that cannot be prepared)
    halts the job with the reason. Output: `build`, the plan as a dict. A run stored before
    this stage existed (its `next_stage` is done already) keeps running as it started."""
    if next_stage in ctx.completed_stages():
        return StageResult(summary=f"{next_stage} ran before builds were chosen: the run keeps the worker's "
                           "interpreter", skipped=True)
    worktree = ensure_checkout(ctx, job)
    plan = plan_for(ctx, worktree, job)
    if not plan.runnable:
        return halt(f"needs-build: {plan.reason}"[:300], f"needs-build: {plan.reason}", status="Failed",
                    extra={"build": plan.to_dict()})
    try:
        prepared = _prepare(ctx, plan, job.head_sha)
    except (ProvisionError, IndexUnavailable, OSError) as exc:
        return halt("the build could not be prepared", f"the build of {job.head_sha[:12]} could not be prepared "
                    f"({plan.describe()}): {exc}"[:1500], status="Failed", extra={"build": plan.to_dict()})
    build = prepared.plan.to_dict()
    if ctx.settings.gpu:  # the GPU the build runs on: model, driver, the CUDA the driver supports
        facts = gpu_facts()
        build["gpu"] = facts.describe() if facts else "none found (no NVIDIA driver on this host)"
    return StageResult(summary=describe(build)[:300], output={"build": build})


def plan_of(build: dict[str, Any] | None) -> BuildPlan | None:
    """The plan a state keeps (None: the run has none, e.g. it was stored before builds existed)."""
    if not build:
        return None
    known = set(BuildPlan.__dataclass_fields__)
    return BuildPlan(**{k: v for k, v in build.items() if k in known})


def runnable(ctx: RunContext, build: dict[str, Any] | None) -> PreparedBuild | None:
    """The kept plan made runnable on this worker (its cached environment), or None for the
    worker's own interpreter (a repository that builds no torch, or a run without a plan)."""
    plan = plan_of(build)
    if plan is None or plan.outcome == "interpreter":
        return None
    if not plan.runnable:
        raise ProvisionError(f"not runnable: {plan.describe()}")
    return _prepare(ctx, plan, plan.base)  # a command's build is of the commit itself: found again


def describe(build: dict[str, Any] | None) -> str:
    """The report's line: which build ran the commit (version, git_version, variant, overlay),
    and on a GPU worker the GPU it ran on."""
    plan = plan_of(build)
    if plan is None:
        return ""
    gpu = (build or {}).get("gpu")
    return plan.describe() + (f"; GPU: {gpu}" if gpu else "")
