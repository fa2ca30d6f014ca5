"""The sandbox over a checkout, built from settings: what runs a repository's code for a stage.

Every run goes on the commit's own build (`app.pipelines.kit.build`): the build the state keeps
gives the interpreter, the environment (`PYTHONPATH` naming the checkout) and the binds of its
compiled parts into the checkout's `torch/`; without one (a repository that builds no torch)
the worker's interpreter runs it, or the one a caller names (`python`: the issue kind's
`/scrub stress` runs on the environment where the repro reproduced).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.engine.git.tree import Checkout
from app.engine.sandbox.runner import Limits, Sandbox, SandboxSpec
from app.engine.sandbox.treerun import TreeRunner
from app.pipelines.base import RunContext
from app.pipelines.kit.build import runnable
from app.pipelines.kit.phases import PhaseClock


def sandbox_spec(ctx: RunContext, build: dict[str, Any] | None = None, *,
                 cpu_s: int | None = None, env: Mapping[str, str] | None = None,
                 limits: Limits | None = None, python: str | None = None,
                 **extra: Any) -> tuple[SandboxSpec, dict[str, str]]:
    """(the sandbox spec, the binds into the checkout) for a run on `build` (a state's `build`),
    or on the interpreter `python` when no build is given."""
    settings = ctx.settings
    prepared = runnable(ctx, build)
    interpreter = prepared.python if prepared and prepared.python else python
    spec = SandboxSpec(
        kind=settings.resolved_sandbox,
        limits=limits or Limits(memory_mb=settings.sandbox_memory_mb, cpu_s=cpu_s),
        gpu=bool(settings.gpu),
        env={**(prepared.env if prepared else {}), **(env or {})},
        **({"python": interpreter} if interpreter else {}),
        **extra,
    )
    return spec, dict(prepared.binds) if prepared else {}


def tree_runner(ctx: RunContext, worktree: Checkout | Path, cpu_s: int | None = None, *,
                build: dict[str, Any] | None = None, env: Mapping[str, str] | None = None,
                python: str | None = None) -> TreeRunner:
    """A sandboxed runner over `worktree` on `build` (the state's; None: `python`, else the
    worker's interpreter). `cpu_s` bounds CPU seconds per run (default: from the timeout, for
    one busy thread; a multi-process stress run needs more); `env` adds variables
    (`PYTHONHASHSEED`)."""
    spec, binds = sandbox_spec(ctx, build, cpu_s=cpu_s, env=env, python=python)
    return TreeRunner(Sandbox(spec), worktree, binds)


# A command that edits a copy of the checkout sends its changes back in its output's tail
# (app.engine.fuzz.treework.run_in_copy): the tail must hold them.
CHANGES_TAIL_BYTES = 32 << 20


def editing_sandbox(ctx: RunContext, build: dict[str, Any] | None = None, *,
                    env: Mapping[str, str] | None = None, network: bool = False) -> tuple[Sandbox, dict[str, str]]:
    """The sandbox a command that edits a copy of the checkout runs in (the fix command, a
    linter), on `build`, and its binds."""
    spec, binds = sandbox_spec(ctx, build, env=env or {}, network=network,
                               limits=Limits(memory_mb=ctx.settings.sandbox_memory_mb, tail_bytes=CHANGES_TAIL_BYTES))
    return Sandbox(spec), binds


def run_timeout(ctx: RunContext, clock: PhaseClock) -> float:
    """Per-run timeout: the configured repro timeout, cut to what is left of the phase."""
    return max(min(float(ctx.settings.repro_timeout), clock.remaining_s), 0.1)
