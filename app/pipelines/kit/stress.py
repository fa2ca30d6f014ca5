"""Seed 004's stress core, for any kind: measure -> budget -> tune -> verify.

`stress(ctx, worktree, node, reason, clock, stage=...)` writes a stress test for the test
`node` into the checkout, measures its failures per minute over a bounded window in the sandbox
(`--keep-going`), checks seed 004's budget (at least one failure in 20 minutes with probability
>= 95%, at 95% confidence: see app.engine.testgen.stress), rewrites the file with the measured
rate and tuned defaults, and verifies that it xfails. It returns what it found (`Stressed`) or,
when it could not measure, the halt result the stage returns (`Partial`). What a kind keeps
of it and how it reports it is the kind's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.engine.git.tree import write_text
from app.engine.testgen.repro_test import GeneratedTest
from app.engine.testgen.stress import (
    BudgetCheck,
    StressKnobs,
    StressMeasurement,
    check_budget,
    measure_args,
    parse_summary,
    stress_test,
    tuned_knobs,
)
from app.pipelines.base import RunContext, StageResult
from app.pipelines.kit.phases import PhaseClock, halt
from app.pipelines.kit.sandbox import run_timeout, tree_runner
from app.pipelines.kit.xfail import XfailCheck, verify_xfail

DEFAULT_WINDOW_S = 60.0  # measurement window; `stress_window_s` in the run's params overrides


@dataclass(frozen=True)
class Stressed:
    """The tuned stress test (written into the checkout), what measured it, and its xfail check."""

    test: GeneratedTest
    measurement: StressMeasurement
    check: BudgetCheck
    knobs: StressKnobs
    described: str  # one sentence: the failures, iterations, time, workers and the budget check
    verification: XfailCheck

    def to_dict(self) -> dict[str, Any]:
        """The `stress` record a state keeps (the status page and the report read it)."""
        return {"measurement": self.measurement.to_dict(), "budget": self.check.to_dict(),
                "knobs": self.knobs.__dict__, "described": self.described}


def _write(worktree: Path, test: GeneratedTest) -> None:
    write_text(worktree, test.path, test.source)  # never through a link of the checkout


def stress(ctx: RunContext, worktree: Path, node: str, reason: str, clock: PhaseClock, *,
           stage: str, build: dict[str, Any] | None = None) -> Stressed | StageResult:
    """Measure, check the budget, tune and verify the stress test of `node`; a halt result (for
    the stage `stage`) when there is no time left to measure or the measuring run broke. `build`:
    the commit's build the runs go on (app.pipelines.kit.build)."""
    per_iteration = min(60.0, run_timeout(ctx, clock))
    knobs = StressKnobs(timeout_s=per_iteration)
    reserve = max(5.0, 0.25 * clock.remaining_s)  # kept for the xfail verification
    window = min(float(ctx.params.get("stress_window_s", DEFAULT_WINDOW_S)), clock.remaining_s - reserve)
    if window < 1:
        return halt("no time left to measure", **clock.exceeded(stage, "no time left for the stress run"),
                    status="Partial")
    draft = stress_test(node, reason=reason, knobs=knobs)
    _write(worktree, draft)
    cpu_s = int((window + per_iteration) * (knobs.workers + 1)) + 30
    runner = tree_runner(ctx, worktree, cpu_s=cpu_s, build=build)
    runner.repack()
    result = runner.run(measure_args(draft, window_s=window, knobs=knobs), window + per_iteration + 20)
    measurement = parse_summary(result.output.text())
    if measurement is None or measurement.errors:
        detail = result.output.tail_text(2000)
        return halt("stress run failed", "the stress test did not run to its summary", status="Partial",
                    extra={"stress": {"output": detail}})
    check = check_budget(measurement)
    tuned = tuned_knobs(measurement, knobs)
    measured = (
        f"{measurement.failures} failures in {measurement.iterations} iterations over "
        f"{measurement.elapsed_s:.0f} s with {measurement.workers} workers; {check.describe()}."
    )
    final = stress_test(node, reason=reason, knobs=tuned, measured=measured)
    _write(worktree, final)
    verification = verify_xfail(runner, final.path, max(clock.remaining_s, 1.0))
    return Stressed(final, measurement, check, tuned, measured, verification)
