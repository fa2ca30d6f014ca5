"""The bisect stage's second half: from the two releases around the change to the PR.

The release bisection leaves two tested releases around the change (adjacent, or with
untested ones between). `narrow(ctx, state, found, plan)` hands them, with their outcomes and
torch versions, to `app.pipelines.kit.culprit.find_culprit`, which narrows over the nightlies
between them and then over commits, probing with the same plan (the clean runs sized to the
rate measured now). None when the release bisection found no change, or no nightly index
is configured (`SCRUB_TORCH_NIGHTLY_INDEX_URL`): then there is nothing finer to search.
"""

from __future__ import annotations

from typing import Any

from app.engine.sandbox.environments import InterpreterError, probe_interpreter
from app.engine.verdict.bisect import BisectResult
from app.engine.verdict.bisect_probe import ProbePlan
from app.engine.verdict.culprit import Culprit
from app.pipelines.base import RunContext
from app.pipelines.kit.culprit import Point, Search, find_culprit
from app.pipelines.state import plain


def _version(python: str) -> str:
    try:
        return probe_interpreter(python).torch_version or ""
    except InterpreterError:
        return ""


def narrow(ctx: RunContext, state: Any, found: BisectResult, plan: ProbePlan) -> Culprit | None:
    if not found.changed_between or len(found.changed_between) != 2 or not ctx.settings.torch_nightly_index_url:
        return None
    envs = ctx.settings.environment_map
    ends = []
    for label in found.changed_between:
        outcome = found.probes.get(label)
        if outcome is None or label not in envs:
            return None
        ends.append(Point(label, _version(envs[label]), outcome, python=envs[label]))
    search = Search(state.repro.source, plain(state.reported), plan, state.expected_exception)
    try:
        return find_culprit(ctx, search, ends[0], ends[1])
    except Exception as exc:  # the release bisection stands without it (GitHub or the index away)
        ctx.log(f"culprit search failed, the release range stands: {type(exc).__name__}: {exc}"[:500])
        return None
