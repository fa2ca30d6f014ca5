"""The issue pipeline's code-running steps, over the sandbox/reproduce/minimize engine.

Three calls, each returning what a stage can store (the types are in `state.py`):

- `reproduce(settings, source, reported, label) -> Reproduction`: run the repro in the sandbox
  on the environment `label`, repeat to tell deterministic from flaky, and give the verdict
  against the reported error (`app.engine.verdict.classify`).
- `probe(settings, source, reported, label, plan) -> ProbeAnswer`: does it reproduce there?
  Reproduces, absent (`plan.clean_runs` clean runs) or unknown (another outcome): the
  bisection probe (`app.engine.verdict.bisect_probe`); `bisect_plan(reproduction)` sizes it
  from the failure rate the reproduce stage measured.
- `minimize_repro(settings, source, label) -> Minimized | None`: shrink while it fails with
  the same signature (`app.engine.minimize.session`); None when nothing smaller was found.

Settings are read here (the pipeline layer), never in the engine.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from app.engine.verdict import bisect_probe
from app.engine.verdict import classify as verdicts
from app.engine.verdict.flaky import SequentialRule, estimate
from app.engine.sandbox.environments import InterpreterError, probe_interpreter
from app.engine.minimize.runners import zygote_for
from app.engine.sandbox.forkserver import ForkServer
from app.engine.verdict.reproduce import read_process
from app.engine.verdict.script import ScriptFacts
from app.engine.verdict.stopped import ENVIRONMENT
from app.engine.verdict.values import StatedValues
from app.engine.verdict.witness import WITNESS_RUNS
from app.engine.sandbox.runner import Limits, SandboxSpec, run_sandboxed
from app.pipelines.issue.state import Minimized, Reproduction

Json = dict[str, Any]
# The issue's stop rule: 5 reproducing runs decide "deterministic" (0.5^5 = 0.03 <= alpha);
# 14 clean runs decide "fixed" (0.8^14 = 0.044 <= beta); a flaky repro runs 6 times for its rate.
ISSUE_RULE = SequentialRule(alpha=0.05, beta=0.05, delta=0.5, pass_delta=0.2, flaky_min_runs=6, max_runs=20)
OUTPUT_KEEP = 4000  # characters of the repro's output kept in the stage record
MINIMIZE_TIMEOUT_S = 60.0  # the seed: "a shorter timeout (30-60 seconds) during minimization"
MINIMIZE_BUDGET_S = 300.0
WARM_JOBS = 2  # warm runs of one script at once on a CPU worker
PASSES_NOW_RUNS = 5  # clean runs enough for "passes now" when nothing could witness a fix


def current_label(settings: Any) -> str:
    """`SCRUB_ENVIRONMENTS` lists environments oldest first: the last one is "now"."""
    return list(settings.environment_map)[-1]


def _spec(settings: Any, label: str) -> SandboxSpec:
    return SandboxSpec(
        kind=settings.resolved_sandbox,
        python=settings.environment_map[label],
        limits=Limits(memory_mb=settings.sandbox_memory_mb),
        gpu=bool(settings.gpu),
        env={"PYTHONHASHSEED": "0"},
    )


def run_once(settings: Any, source: str, label: str, timeout_s: float | None = None) -> Json:
    """One cold sandboxed run, classified by `app.engine.verdict.reproduce` (outcome, exception,
    message, signature, signal name, versions, output tail)."""
    timeout = timeout_s or settings.repro_timeout
    spec = _spec(settings, label)
    process = run_sandboxed(source, spec, timeout_s=timeout)
    run = read_process(process, python=spec.python, torch_version=_torch_version(spec.python))
    return _as_run(run, label, timeout)


def _torch_version(python: str) -> str | None:
    try:
        return probe_interpreter(python).torch_version
    except InterpreterError:
        return None


def reproduce(settings: Any, source: str, reported: Json | None, label: str | None = None,
              *, self_checking: bool = False, expected_exception: str | None = None,
              script: ScriptFacts | None = None, values: StatedValues | None = None,
              clean_runs: int | None = None) -> Reproduction:
    """Run until `ISSUE_RULE` settles it, the sequential rule `scrub repro --adaptive` and the
    CI rerun use (with the issue's own error rates):

    - 5 reproducing runs in a row: deterministic; a reproducing and a clean run: flaky, run on
      to 6 runs for the rate;
    - `fixed` closes the issue, so it needs 14 clean runs in a row (a bug failing in 20% of
      runs or more is missed with probability <= 5%); `clean_runs` lowers that when nothing
      can witness a fix (the verdict can then only be "passes now", which closes nothing);
    - a run stopped by the environment (a missing package, GPU or input file) settles it at
      once: it is not the bug, and every run stops the same way;
    - any other verdict (a different error) is settled after 5 runs.

    The first run is cold, exactly as a person runs the script (the first warm run goes beside
    it); the repeated runs are warm
    (`warm_runs`: forked from a zygote that imported torch once, sharing one Inductor/FX cache
    in that zygote's private /tmp, so a compiled repro compiles once per verdict; never
    shared with another script). When the first warm run disagrees with the cold one (a
    script that depends on a fresh interpreter), the rest run cold.

    A timeout is not repeated: it already cost the whole timeout. The result carries the
    failure rate and its 95% Wilson interval.
    """
    label = label or current_label(settings)
    hang = (reported or {}).get("kind") == "hang"

    def judge(run: Json) -> str:
        return verdicts.classify(reported, run, self_checking=self_checking, expected_exception=expected_exception,
                                 script=script, values=values, source=source)

    runs: list[Json] = []
    seen: list[str] = []
    with warm_runs(settings, label, source) as warm, ThreadPoolExecutor(max_workers=2) as pool:
        cold = pool.submit(run_once, settings, source, label)
        # The first warm run goes beside the cold one (its zygote imports meanwhile), so a
        # compiled repro's two compilations overlap; not for a reported hang (both would wait
        # out the timeout) nor on a GPU worker.
        early = pool.submit(warm.run, source, 1) if warm.jobs > 1 and not hang else None
        runs.append(cold.result())
        seen.append(judge(runs[-1]))
        while len(runs) < ISSUE_RULE.max_runs and runs[-1]["outcome"] != "timeout" and not _settled(seen, clean_runs):
            want = min(warm.jobs, ISSUE_RULE.max_runs - len(runs), _runs_left(seen, clean_runs)) if len(runs) > 1 else 1
            batch, early = (early.result(), None) if early is not None else (warm.run(source, max(1, want)), None)
            if len(runs) == 1 and judge(batch[0]) != seen[0]:
                warm.disable()  # this script behaves differently in a forked interpreter
                batch = [run_once(settings, source, label)]
            for run in batch:
                runs.append(run)
                seen.append(judge(run))
        # An early warm run not needed after all (the cold one timed out) ends by its own
        # timeout; leaving the pool waits for it, then the zygote stops.
    hits = seen.count(verdicts.REPRODUCES)
    if hits:
        verdict = verdicts.REPRODUCES
    else:
        others = [v for v in seen if v != verdicts.FIXED]
        verdict = max(set(others), key=others.count) if others else verdicts.FIXED
    first = next(r for r, v in zip(runs, seen) if v == verdict) if verdict in seen else runs[0]
    rate = estimate(hits, len(runs))
    return Reproduction(
        verdict=verdict,
        flaky_ratio=verdicts.flaky_ratio(seen),
        runs=len(runs),
        reproduced=hits,
        rate=round(rate.rate, 4),
        interval=[round(rate.interval[0], 4), round(rate.interval[1], 4)],
        outcomes=_counts(r["outcome"] for r in runs),  # each sandboxed run's outcome (for /metrics)
        result=first,
        description=verdicts.describe(first),
        modes=_counts(r.get("mode") or "cold" for r in runs),
    )


def _runs_left(seen: list[str], clean_runs: int | None) -> int:
    """Runs still needed if every next run agrees (so a batch never overshoots the rule)."""
    hits = seen.count(verdicts.REPRODUCES)
    if hits == len(seen):
        return ISSUE_RULE.runs_to_decide_deterministic - len(seen)
    if hits:
        return ISSUE_RULE.flaky_min_runs - len(seen)
    if any(v != verdicts.FIXED for v in seen):
        return ISSUE_RULE.runs_to_decide_deterministic - len(seen)
    return (clean_runs or ISSUE_RULE.runs_to_decide_passes) - len(seen)


class warm_runs:
    """A fork server for one verdict's repeated runs (a context manager), or cold runs after
    `disable()` or when it cannot start. Its zygote starts in the background while the cold
    first run goes."""

    def __init__(self, settings: Any, label: str, source: str):
        self.settings, self.label = settings, label
        self.spec = _spec(settings, label)
        self.jobs = 1 if settings.gpu else WARM_JOBS  # parallel only on CPU workers
        # The minimizer's zygote: Dynamo and the optimizers preloaded, and for a compiled repro
        # Inductor's modules and one tiny compile, so a forked run pays none of that again.
        zygote = zygote_for(source)
        self.server: ForkServer | None = ForkServer(self.spec, jobs=self.jobs, preload=zygote.preload,
                                                    warmup=zygote.warmup)

    def __enter__(self) -> warm_runs:
        if self.server is not None:
            self.server.start_in_background()
        return self

    def __exit__(self, *exc: object) -> None:
        self.disable()

    def disable(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None

    def run(self, source: str, count: int) -> list[Json]:
        timeout = self.settings.repro_timeout
        if self.server is None:
            return [run_once(self.settings, source, self.label) for _ in range(count)]
        processes = self.server.run_many([source] * count, timeout_s=timeout)
        version = self.server.torch_version or _torch_version(self.spec.python)
        return [_as_run(read_process(p, python=self.spec.python, torch_version=version), self.label, timeout)
                for p in processes]


def _as_run(run: Any, label: str, timeout: float) -> Json:
    return run.to_dict() | {"environment": label, "timeout_s": timeout, "output_tail": run.output_tail[-OUTPUT_KEEP:]}


def witness_runs(settings: Any, source: str, label: str, judge: Any) -> tuple[list[str], str]:
    """Up to `WITNESS_RUNS` cold runs on the older release `label`, stopping at the first that
    reproduces: (each run's verdict, what the last one did)."""
    seen, observed = [], "not run"
    for _ in range(WITNESS_RUNS):
        run = run_once(settings, source, label)
        seen.append(judge(run))
        observed = verdicts.describe(run)
        if seen[-1] == verdicts.REPRODUCES or run["outcome"] == "timeout":
            break
    return seen, observed


def _counts(values: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[str(value)] = counts.get(str(value), 0) + 1
    return counts


def _settled(seen: list[str], clean_runs: int | None = None) -> bool:
    if seen and seen[0] in ENVIRONMENT and len(set(seen)) == 1:
        return True  # a missing package, GPU or input stops every run alike: one run says so
    hits, runs = seen.count(verdicts.REPRODUCES), len(seen)
    decided = ISSUE_RULE.decide(hits, runs)
    if decided in ("deterministic", "flaky"):
        return True
    if hits == 0 and any(v != verdicts.FIXED for v in seen):
        return runs >= ISSUE_RULE.runs_to_decide_deterministic
    return decided == "passes" or (hits == 0 and clean_runs is not None and runs >= clean_runs)


def bisect_plan(reproduction: Json | None) -> bisect_probe.ProbePlan:
    """Clean runs that make a release "absent": sized to the rate measured now, with the
    issue rule's idea of deterministic and, when it passes now, the rate "fixed" is sized for."""
    return bisect_probe.ProbePlan.for_reproduction(
        reproduction, deterministic_after=ISSUE_RULE.runs_to_decide_deterministic,
        unknown_rate=ISSUE_RULE.pass_delta or ISSUE_RULE.delta)


def probe(settings: Any, source: str, reported: Json | None, label: str, plan: bisect_probe.ProbePlan,
          *, expected_exception: str | None = None) -> bisect_probe.ProbeAnswer:
    def once() -> tuple[str, Json]:
        run = run_once(settings, source, label)
        return verdicts.classify(reported, run, expected_exception=expected_exception), run

    return bisect_probe.probe(once, plan)


def minimize_repro(settings: Any, source: str, label: str) -> Minimized | None:
    """Shrink `source` while it fails with the same signature (fork server for candidates, a cold
    re-check of the result). None when nothing smaller was found or the result does not hold."""
    from app.engine.minimize import code_lines
    from app.engine.minimize.problem import CouldNotMinimize
    from app.engine.minimize.runners import sandbox_runners, zygote_for
    from app.engine.minimize.session import NothingToKeep
    from app.engine.minimize.session import minimize_repro as shrink

    spec = _spec(settings, label)
    jobs = max(1, min(2, os.cpu_count() or 1))
    cold, warm, close = sandbox_runners(spec.python, jobs, spec, zygote=zygote_for(source))
    try:
        outcome = shrink(source, run=warm, cold_run=cold, jobs=jobs,
                         timeout_s=min(settings.repro_timeout, MINIMIZE_TIMEOUT_S), budget_s=MINIMIZE_BUDGET_S)
    except (CouldNotMinimize, NothingToKeep):
        return None
    finally:
        close()
    result = outcome.result
    if not outcome.reproduces or code_lines(result.source) >= code_lines(source):
        return None
    return Minimized(
        source=result.source,
        original_lines=code_lines(source),
        final_lines=code_lines(result.source),
        candidates=result.stats.candidates,
        wall_s=round(result.wall_s, 3),
        timed_out=result.timed_out,
    )
