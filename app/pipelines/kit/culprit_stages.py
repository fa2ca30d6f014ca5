"""The culprit search after the nightlies, as three stages on both sides of the trust split.

A kind whose code stage left a `Narrowing` waiting for `RANGE` (the issue kind's `bisect`,
progression's `culprit`: `kit.culprit.nightly_step`, on a repro queue) has these stages after it,
in this order (`range_stage`, `commits_stage`, `pr_stage`; others may come between them):

    culprit_range    default queue: the commits between the two nightlies and how each can be
                     built, read from GitHub (`kit.commit_range.read_range`)
    culprit_commits  repro queue: the commits bisected over those builds (`kit.culprit.commit_step`)
    culprit_pr       default queue: the boundary commit's PR (`kit.commit_range.name_pulls`)

Each writes `culprit` (the best answer so far, what the comment and report read) and
`narrowing` (`kit.narrowing`), so the state needs both fields. A stage with nothing to do is
skipped on the queue its neighbours run on (`idle`, `kit.routed`): a run with no commit range to
search costs no handoff. All three are optional: the release or nightly range stands without them.

`find_culprit(ctx, search, older, newer)` runs every step in one process, for a context that
holds both sides (the CLI's, tests, benchmarks); no stage calls it.
"""

from __future__ import annotations

from typing import Any, Callable

from app.engine.verdict.culprit import Culprit, describe
from app.pipelines.base import QueueRule, RunContext, Stage, StageResult
from app.pipelines.kit import commit_range
from app.pipelines.kit.culprit import Point, Search, commit_step, nightly_step
from app.pipelines.kit.narrowing import PROBE, PULLS, RANGE, waits_for
from app.pipelines.kit.routed import Routed, on_default

SearchOf = Callable[[RunContext, Any], Search]  # (ctx, the kind's state) -> what a probe runs


def torch_repo(ctx: RunContext) -> str:
    return str(getattr(ctx.settings, "torch_repo", "") or "pytorch/pytorch")


def _said(ctx: RunContext, culprit: Culprit) -> str:
    return describe(culprit, str(ctx.params.get("repo") or culprit.repo))


def read_commits(ctx: RunContext, state: Any) -> StageResult:
    culprit, narrowing = commit_range.read_range(ctx.github, torch_repo(ctx), state.culprit, state.narrowing)
    summary = commit_range.range_summary(narrowing) if waits_for(narrowing, PROBE) else culprit.note
    return StageResult(summary=summary, output={"culprit": culprit, "narrowing": narrowing})


def probe_commits(search_of: SearchOf) -> Callable[[RunContext, Any], StageResult]:
    def probe(ctx: RunContext, state: Any) -> StageResult:
        culprit, narrowing = commit_step(ctx, search_of(ctx, state), state.culprit, state.narrowing)
        return StageResult(summary=_said(ctx, culprit), output={"culprit": culprit, "narrowing": narrowing})

    return probe


def name_pr(ctx: RunContext, state: Any) -> StageResult:
    culprit, narrowing = commit_range.name_pulls(ctx.github, torch_repo(ctx), state.culprit, state.narrowing)
    return StageResult(summary=_said(ctx, culprit), output={"culprit": culprit, "narrowing": narrowing})


def waiting(step: str) -> Callable[[Any], bool]:
    return lambda state: waits_for(state.narrowing, step)


def range_stage(state: Any, idle: QueueRule) -> Stage:
    """`culprit_range` over the kind's state class `state`."""
    return Routed(waiting(RANGE), read_commits, on_default, idle,
                  "no commit range to read").stage("culprit_range", state)


def commits_stage(state: Any, code_queue: QueueRule, idle: QueueRule, search_of: SearchOf) -> Stage:
    """`culprit_commits`: the probes, on the kind's code queue."""
    return Routed(waiting(PROBE), probe_commits(search_of), code_queue, idle,
                  "no commit to probe").stage("culprit_commits", state)


def pr_step(idle: QueueRule) -> Routed:
    """`culprit_pr`'s function and queue (a kind with more to name there wraps `name_pr`)."""
    return Routed(waiting(PULLS), name_pr, on_default, idle, "no commit to name a PR for")


def pr_stage(state: Any, idle: QueueRule) -> Stage:
    return pr_step(idle).stage("culprit_pr", state)


def find_culprit(ctx: RunContext, search: Search, older: Point, newer: Point) -> Culprit:
    """Every step in this process (module docstring): `ctx.github` must be a full GitHub port."""
    culprit, narrowing = nightly_step(ctx, search, older, newer)
    repo = torch_repo(ctx)
    if narrowing is not None and waits_for(narrowing, RANGE):
        culprit, narrowing = commit_range.read_range(ctx.github, repo, culprit, narrowing)
    if narrowing is not None and waits_for(narrowing, PROBE):
        culprit, narrowing = commit_step(ctx, search, culprit, narrowing)
    if narrowing is not None and waits_for(narrowing, PULLS):
        culprit, narrowing = commit_range.name_pulls(ctx.github, repo, culprit, narrowing)
    return culprit


__all__ = ["commits_stage", "find_culprit", "name_pr", "pr_stage", "pr_step", "probe_commits", "range_stage",
           "read_commits", "torch_repo"]
