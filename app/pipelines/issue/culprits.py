"""The bisect stage's second half: from the two releases around the change to the nightlies.

The release bisection leaves two tested releases around the change (adjacent, or with
untested ones between). `narrow(ctx, state, found, plan)` hands them, with their outcomes and
torch versions, to `app.pipelines.kit.culprit.nightly_step`, which narrows over the nightlies
between them, probing with the same plan (the clean runs sized to the rate measured now), and
leaves the commit range to the stages after `bisect` (`app.pipelines.kit.culprit_stages`: the
trusted side reads the commits, the repro side probes them, the trusted side names the PR).
None when the release bisection found no change, or no nightly index is configured
(`SCRUB_TORCH_NIGHTLY_INDEX_URL`): then there is nothing finer to search.
"""

from __future__ import annotations

from typing import Any

from app.engine.sandbox.environments import InterpreterError, probe_interpreter
from app.engine.verdict.bisect import BisectResult
from app.engine.verdict.bisect_probe import ProbePlan
from app.engine.verdict.culprit import Culprit
from app.pipelines.base import RunContext
from app.pipelines.kit.culprit import Point, Search, nightly_step
from app.pipelines.kit.narrowing import Narrowing
from app.pipelines.state import plain


def _version(python: str) -> str:
    try:
        return probe_interpreter(python).torch_version or ""
    except InterpreterError:
        return ""


Narrowed = tuple[Culprit, Narrowing | None]


def search_of(state: Any, plan: ProbePlan | None = None) -> Search:
    """What every culprit probe runs: the repro, the reported failure, the release probes' plan."""
    return Search(state.repro.source, plain(state.reported), plan or state.bisect_plan, state.expected_exception)


def narrow(ctx: RunContext, state: Any, found: BisectResult, plan: ProbePlan) -> Narrowed | None:
    if not found.changed_between or len(found.changed_between) != 2 or not ctx.settings.torch_nightly_index_url:
        return None
    envs = ctx.settings.environment_map
    ends = []
    for label in found.changed_between:
        outcome = found.probes.get(label)
        if outcome is None or label not in envs:
            return None
        ends.append(Point(label, _version(envs[label]), outcome, python=envs[label]))
    try:
        return nightly_step(ctx, search_of(state, plan), ends[0], ends[1])
    except Exception as exc:  # the release bisection stands without it (the index away, ...)
        ctx.log(f"culprit search failed, the release range stands: {type(exc).__name__}: {exc}"[:500])
        return None
