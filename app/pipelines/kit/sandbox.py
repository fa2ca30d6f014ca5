"""The sandbox over a checkout, built from settings: what runs a repository's code for a stage."""

from __future__ import annotations

from pathlib import Path

from app.engine.git.tree import Checkout
from app.engine.sandbox.runner import Limits, Sandbox, SandboxSpec
from app.engine.sandbox.treerun import TreeRunner
from app.pipelines.base import RunContext
from app.pipelines.kit.phases import PhaseClock


def tree_runner(ctx: RunContext, worktree: Checkout | Path, cpu_s: int | None = None,
                python: str | None = None) -> TreeRunner:
    """A sandboxed runner over `worktree`. `cpu_s` bounds CPU seconds per run (default: from
    the timeout, for one busy thread; a multi-process stress run needs more); `python`: the
    interpreter (default: the worker's own)."""
    settings = ctx.settings
    spec = SandboxSpec(
        kind=settings.resolved_sandbox,
        limits=Limits(memory_mb=settings.sandbox_memory_mb, cpu_s=cpu_s),
        gpu=bool(settings.gpu),
        **({"python": python} if python else {}),
    )
    return TreeRunner(Sandbox(spec), worktree)


def run_timeout(ctx: RunContext, clock: PhaseClock) -> float:
    """Per-run timeout: the configured repro timeout, cut to what is left of the phase."""
    return max(min(float(ctx.settings.repro_timeout), clock.remaining_s), 0.1)
