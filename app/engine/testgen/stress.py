"""Stress tests for flaky failures: generate one, measure it, check the 20-minute budget.

Seed 004's goal: a stress test that fails *reliably within 20 minutes*. `stress_test` writes
`tests/scrub/test_<name>_stress.py` (text in `stress_template`), which amplifies the failure
(in-process repetition, parallel workers, short per-iteration timeouts; CLI knobs for each)
and is marked `xfail(strict=True)`. The pipeline then runs it in the sandbox for a bounded
window with `--keep-going` (`measure_argv`) and reads its `SCRUB_STRESS {json}` summary.

The budget check (`check_budget`). Failures of a stress run arrive as a Poisson process of
rate lambda per minute, so P(at least one failure in T minutes) = 1 - exp(-lambda * T), and
P >= 0.95 in T = 20 needs lambda >= ln(20) / 20 = 0.150 per minute (one failure per 6.7
minutes). Measured over t minutes with k failures, the point estimate k / t is optimistic
when k is small, so the check uses the one-sided 95% lower confidence bound of lambda (the
exact Garwood bound: the mu with P(X >= k | mu) = 0.05, divided by t). Passing means: with
95% confidence, the test fails within 20 minutes with probability >= 95%.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

from app.engine.verdict.flaky import stress_plan
from app.engine.testgen.stress_template import STRESS_TEMPLATE
from app.engine.testgen.repro_test import TEST_DIR, GeneratedTest, device_of, slug
from app.engine.testgen.text import docstring_safe, one_line

SUMMARY_TAG = "SCRUB_STRESS "
BUDGET_MINUTES = 20.0
TARGET_PROBABILITY = 0.95
TUNE_TARGET = 0.9999


@dataclass(frozen=True)
class StressKnobs:
    """Defaults written into the generated file (each also a CLI flag)."""

    iterations: int = 200  # per worker, per run
    workers: int = 2
    timeout_s: float = 60.0  # per iteration
    duration_s: float = BUDGET_MINUTES * 60


@dataclass(frozen=True)
class StressMeasurement:
    iterations: int
    failures: int
    timeouts: int
    errors: int
    elapsed_s: float
    workers: int
    first_failure: str = ""
    first_failure_s: float | None = None  # seconds from the start of the run to its first failure

    @property
    def minutes(self) -> float:
        return max(self.elapsed_s, 1e-9) / 60

    @property
    def rate_per_minute(self) -> float:
        return self.failures / self.minutes

    def to_dict(self) -> dict:
        return asdict(self) | {"rate_per_minute": round(self.rate_per_minute, 3)}


@dataclass(frozen=True)
class BudgetCheck:
    rate_per_minute: float  # point estimate
    rate_lower: float  # one-sided lower confidence bound
    p_fail_in_budget: float  # from the point estimate
    p_fail_in_budget_lower: float  # from the lower bound: what `passes` judges
    budget_minutes: float
    target: float
    passes: bool

    def describe(self) -> str:
        verdict = "meets" if self.passes else "misses"
        return (
            f"{self.rate_per_minute:.2f} failures/min (95% lower bound {self.rate_lower:.2f}); "
            f"P(>=1 failure in {self.budget_minutes:g} min) = {self.p_fail_in_budget:.3f} "
            f"(>= {self.p_fail_in_budget_lower:.3f} at 95% confidence): {verdict} the "
            f"{self.target:.0%} target"
        )

    def to_dict(self) -> dict:
        return asdict(self)


def stress_test(
    node_id: str,
    *,
    reason: str,
    knobs: StressKnobs = StressKnobs(),
    measured: str = "",
    directory: str = TEST_DIR,
) -> GeneratedTest:
    """The stress test file for the flaky test `node_id` (deterministic text)."""
    name = slug(node_id)
    path = f"{directory}/test_{name}_stress.py"
    depth = len(Path(path).parent.parts)
    device = device_of(node_id)
    text = STRESS_TEMPLATE.substitute(
        node_id=docstring_safe(one_line(node_id)),
        node_id_repr=repr(node_id),
        reason=docstring_safe(reason.replace('"""', "'''")[:300]),
        reason_repr=repr(reason[:300]),
        measured=f"Measured: {docstring_safe(measured)}\n" if measured else "",
        path=docstring_safe(one_line(path)),
        name=name,
        root=f"Path(__file__).resolve().parents[{depth}]",
        iterations=knobs.iterations,
        workers=knobs.workers,
        timeout_s=repr(float(knobs.timeout_s)),
        duration_s=repr(float(knobs.duration_s)),
    )
    return GeneratedTest(path, text, (path,), "pytest", (device,) if device else ())


MIN_MEASURED_ITERATIONS = 30  # per worker: fewer is no measurement (a loaded machine runs past the window)


def measure_args(test: GeneratedTest, *, window_s: float, knobs: StressKnobs, max_failures: int = 20,
                 min_iterations: int = MIN_MEASURED_ITERATIONS) -> list[str]:
    """Interpreter arguments that run the stress test for about `window_s` seconds, counting
    failures (stopping early after `max_failures`: enough for a tight rate). Each worker runs
    at least `min_iterations` times even past the window, so a slow or loaded machine measures
    a rate over as many tries as a fast one (up to the per-iteration timeouts)."""
    return [
        test.path, "--keep-going", "--duration", str(window_s),
        "--iterations", str(10**6), "--workers", str(knobs.workers),
        "--timeout", str(knobs.timeout_s), "--max-failures", str(max_failures),
        "--min-iterations", str(min_iterations),
    ]


def parse_summary(stdout: str) -> StressMeasurement | None:
    """The `SCRUB_STRESS {json}` line of a stress run, or None if it never got there."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(SUMMARY_TAG):
            data = json.loads(line[len(SUMMARY_TAG):])
            fields = StressMeasurement.__dataclass_fields__
            return StressMeasurement(**{k: v for k, v in data.items() if k in fields})
    return None


def poisson_lower_bound(k: int, confidence: float = 0.95) -> float:
    """Exact one-sided lower confidence bound on a Poisson mean after observing `k` events."""
    if k <= 0:
        return 0.0
    alpha = 1 - confidence

    def p_at_least_k(mu: float) -> float:
        term, cdf = math.exp(-mu), 0.0
        for i in range(k):
            cdf += term
            term *= mu / (i + 1)
        return 1 - cdf

    low, high = 0.0, float(k) + 10 * math.sqrt(k) + 10
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (mid, high) if p_at_least_k(mid) < alpha else (low, mid)
    return low


def required_rate(budget_minutes: float = BUDGET_MINUTES, target: float = TARGET_PROBABILITY) -> float:
    """Failures per minute a Poisson process needs to fail in the budget with `target` odds."""
    return -math.log(1 - target) / budget_minutes


def check_budget(
    measurement: StressMeasurement,
    budget_minutes: float = BUDGET_MINUTES,
    target: float = TARGET_PROBABILITY,
    confidence: float = 0.95,
) -> BudgetCheck:
    """Whether the stress test fails within the budget with probability >= target."""
    rate = measurement.rate_per_minute
    lower = poisson_lower_bound(measurement.failures, confidence) / measurement.minutes
    p_point = 1 - math.exp(-rate * budget_minutes)
    p_lower = 1 - math.exp(-lower * budget_minutes)
    return BudgetCheck(rate, lower, p_point, p_lower, budget_minutes, target, p_lower >= target)


def tuned_knobs(measurement: StressMeasurement, base: StressKnobs = StressKnobs(),
                budget_minutes: float = BUDGET_MINUTES, target: float = TUNE_TARGET) -> StressKnobs:
    """Defaults for the committed file: enough iterations per worker to reach `target`.

    Takes the per-iteration failure probability at its 95% lower bound (the Poisson bound on
    the failure count over the iterations run) and asks `flaky.stress_plan` how many
    iterations give a failure with `target` odds; capped so that a run at the measured speed
    stays inside the budget. The target is far above the 95% of the budget check: the file's
    default run is what verifies the xfail, and a verification that misses the failure one
    time in twenty would itself be flaky.
    """
    if measurement.iterations == 0:
        return base
    duration = budget_minutes * 60
    per_minute = measurement.iterations / measurement.minutes / max(measurement.workers, 1)
    cap = max(int(per_minute * budget_minutes), 1)
    p_low = min(poisson_lower_bound(measurement.failures) / measurement.iterations, 1.0)
    if p_low <= 0:
        return StressKnobs(cap, base.workers, base.timeout_s, duration)
    plan = stress_plan(p_low, 60 / per_minute, window_s=duration, confidence=target)
    per_worker = math.ceil(plan.runs_needed / max(base.workers, 1))
    return StressKnobs(min(max(per_worker, 1), cap), base.workers, base.timeout_s, duration)
