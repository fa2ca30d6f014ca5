"""An issue's re-check: the repro on the newest build, the witness, and the culprit of a fix.

- `recheck`: the repro that reproduced, run on the build the scheduler chose. It reproduces at
  the first reproducing run; it is absent only after enough clean runs for the failure rate
  measured when it was found (the low end of its 95% interval, at most the 20% the issue kind's
  "fixed" is sized for: 14 runs for a deterministic bug); any other outcome is inconclusive.
- the witness rule (`app.engine.verdict.witness`): "absent" becomes `fixed` only when the same
  script still fails with the reported failure on the build it last reproduced on (up to
  `WITNESS_RUNS` runs there): the script demonstrably shows the bug, and the new build does
  not. Without that (the old build is gone, or passes too), the verdict is `passes-now`, which
  closes nothing.
- `culprit`: for a fix, the change between the two builds, narrowed to nightlies
  (`app.pipelines.kit.culprit`), probed with the bisection's plan; the commits and the PR are
  the `culprit_*` stages' (`app.pipelines.kit.culprit_stages`).
"""

from __future__ import annotations

from typing import Any

from app.domain import Verdict
from app.engine.envs.nightlies import Nightly
from app.engine.envs.provision import ProvisionError
from app.engine.verdict.bisect_probe import ABSENT, REPRODUCES, UNKNOWN, ProbePlan
from app.engine.verdict.classify import describe
from app.engine.verdict.culprit import Culprit
from app.engine.verdict.witness import WITNESS_RUNS
from app.pipelines.base import RunContext, StageResult
from app.pipelines.kit import builds, probes
from app.pipelines.kit.culprit import UNTESTABLE, Point, Search, nightly_step
from app.pipelines.kit.narrowing import Narrowing

FIXED_RATE = 0.2  # the rarest failure rate the issue kind's "fixed" is sized to catch
MAX_CLEAN_RUNS = 30
DETERMINISTIC_AFTER = 5  # reproducing runs in a row the issue kind calls deterministic


def clean_runs_plan(reproduction: dict | None) -> ProbePlan:
    """Clean runs before "absent" here: sized to the rate measured then, never looser than "fixed"."""
    interval = (reproduction or {}).get("interval")
    low = float(interval[0]) if isinstance(interval, (list, tuple)) and interval else 1.0
    return ProbePlan.for_rate(min(FIXED_RATE, low) if low > 0 else FIXED_RATE, max_runs=MAX_CLEAN_RUNS)


def bisect_plan(reproduction: dict | None) -> ProbePlan:
    """The culprit search's probes: as the issue kind's release bisection sizes them."""
    return ProbePlan.for_reproduction(reproduction, deterministic_after=DETERMINISTIC_AFTER, unknown_rate=FIXED_RATE)


def python_of(settings: Any, build: dict[str, Any]) -> str:
    """The interpreter of a build (a nightly is installed once); raises when it cannot be had."""
    if build.get("kind") == "nightly":
        return builds.python_of(builds.nightly_env(settings, Nightly.from_dict(build["nightly"])))
    python = settings.environment_map.get(build.get("label")) or build.get("python")
    if not python:
        raise ProvisionError(f"{build.get('label')} is not provisioned on this worker")
    return str(python)


def _search(params: dict[str, Any], plan: ProbePlan) -> Search:
    return Search(str(params.get("source") or ""), params.get("reported"), plan, params.get("expected_exception"))


def recheck(ctx: RunContext, params: dict[str, Any]) -> StageResult:
    settings, build = ctx.settings, params["build"]
    label = str(build["label"])
    try:
        python = python_of(settings, build)
    except UNTESTABLE as exc:
        why = f"{label} could not be installed: {exc}"[:300]
        return StageResult(summary=why, output={"outcome": UNKNOWN, "why": why, "verdict": Verdict.inconclusive})
    plan = clean_runs_plan(params.get("reproduction"))
    search = _search(params, plan)
    answer, run = probes.recheck(settings, python, search.source, search.reported, plan, label=label,
                                 expected_exception=search.expected_exception)
    observed = describe(dict(run))
    output: dict[str, Any] = {"outcome": answer.outcome, "runs": answer.runs, "observed": observed}
    if answer.outcome == REPRODUCES:
        return StageResult(summary=f"still reproduces on {label} (run {answer.runs}): {observed}",
                           output=output | {"verdict": Verdict.reproduces})
    if answer.outcome == UNKNOWN:
        return StageResult(summary=f"inconclusive on {label}: {answer.why}",
                           output=output | {"why": answer.why, "verdict": Verdict.inconclusive})
    return _witnessed(ctx, params, output, label, answer.runs)


def _witnessed(ctx: RunContext, params: dict[str, Any], output: dict[str, Any], label: str, runs: int) -> StageResult:
    """Absent on the new build: fixed only if the old build still shows the bug (module docstring)."""
    last = params.get("last_build")
    summary = f"passes on {label} ({runs} clean runs)"
    if not last:
        why = "the build it last reproduced on is no longer provisioned, so nothing shows this script still fails"
        return StageResult(summary=f"{summary}; {why}", output=output | {"witness": why, "verdict": Verdict.passes_now})
    try:
        old_python = python_of(ctx.settings, last)
    except UNTESTABLE as exc:
        why = f"the build it last reproduced on ({last['label']}) could not be installed again: {exc}"[:300]
        return StageResult(summary=f"{summary}; {why}", output=output | {"witness": why, "verdict": Verdict.passes_now})
    search = _search(params, ProbePlan(WITNESS_RUNS, FIXED_RATE))
    seen = probes.probe_on(ctx.settings, old_python, search.source, search.reported, search.plan,
                           label=str(last["label"]), expected_exception=search.expected_exception)
    if seen.outcome == REPRODUCES and last["label"] == label:  # the same build failed again: it is flaky
        return StageResult(summary=f"reproduces on {label} after {runs} clean runs: flaky",
                           output=output | {"outcome": REPRODUCES, "verdict": Verdict.reproduces})
    if seen.outcome == REPRODUCES:
        why = f"on PyTorch {last['label']} the same script still fails with the reported failure"
        return StageResult(summary=f"{summary}; witness: {why}",
                           output=output | {"witness": why, "witness_holds": True, "verdict": Verdict.fixed})
    said = "passes there too" if seen.outcome == ABSENT else f"could not be tested there ({seen.why})"
    why = f"on PyTorch {last['label']}, where it reproduced before, the script {said}"
    return StageResult(summary=f"{summary}; no witness: {why}", output=output | {"witness": why,
                                                                                    "verdict": Verdict.passes_now})


def search_of(ctx: RunContext, state: Any = None) -> Search:
    """What every culprit probe runs: the repro, sized as the issue kind's bisection sizes it."""
    return _search(ctx.params, bisect_plan(ctx.params.get("reproduction")))


def culprit(ctx: RunContext, params: dict[str, Any]) -> tuple[Culprit, Narrowing | None] | None:
    """The fix between the build it last reproduced on and the new one, to the nightlies (None:
    no range to search)."""
    last, build = params.get("last_build"), params["build"]
    if not last or last.get("label") == build.get("label"):
        return None

    def point(b: dict[str, Any], reproduces: bool) -> Point:
        nightly = Nightly.from_dict(b["nightly"]) if b.get("kind") == "nightly" else None
        return Point(str(b["label"]), str(b.get("version") or ""), reproduces, python=str(b.get("python") or ""),
                     nightly=nightly)

    return nightly_step(ctx, search_of(ctx), point(last, True), point(build, False))
