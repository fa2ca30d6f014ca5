"""Repeated runs: failure rate with a Wilson interval, an adaptive stop rule, a stress plan.

Adaptive stop rule (`SequentialRule`), deciding `deterministic`, `flaky` or `passes`:

- One failing and one passing run prove 0 < p < 1: the verdict is `flaky` at once (no
  statistical error, given each run is classified correctly). Runs then continue up to
  `flaky_min_runs` only to estimate the rate.
- `k` failures in a row decide `deterministic` when `(1 - delta)^k <= alpha`: a repro that
  fails with probability at most `1 - delta` (a flaky one) is called deterministic with
  probability at most `alpha`.
- `k` passes in a row decide `passes` when `(1 - pass_delta)^k <= beta`: a bug that fails
  with probability at least `pass_delta` (default: `delta`) is called fixed with probability
  at most `beta`.

Defaults: alpha = 0.05, beta = 0.05, delta = 0.2, so 14 agreeing runs decide (0.8^14 = 0.044).
The CI rerun (`app.engine.verdict.rerun.CI_RERUN_RULE`) is stricter: alpha = beta = 0.01, delta =
0.25 and pass_delta = 0.10, so 17 failures or 44 passes in a row.
This is Wald's SPRT between p = 1 - delta and p = 1 (resp. p = delta and p = 0) with the
observation that a single contrary run ends it; it never needs more than
`ceil(log(min(alpha, beta)) / log(1 - delta))` runs for a verdict. A bug failing less often
than delta (20%) may be reported as `passes` with probability up to (1 - p)^14: for such rare
failures use `stress_plan` and a longer run instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from app.runstate import Z_95, wilson_interval  # the one interval, shared with the status page

__all__ = ["RateEstimate", "SequentialRule", "Verdict", "Z_95", "estimate", "stress_plan", "verdict_of",
           "wilson_interval"]

Verdict = Literal["deterministic", "flaky", "passes"]


@dataclass(frozen=True)
class RateEstimate:
    runs: int
    failures: int
    rate: float
    interval: tuple[float, float]


def estimate(failures: int, runs: int) -> RateEstimate:
    return RateEstimate(runs, failures, failures / runs if runs else 0.0, wilson_interval(failures, runs))


def verdict_of(failures: int, runs: int) -> Verdict:
    """The plain reading of fixed-count runs: all failed, none failed, or mixed."""
    if failures and failures == runs:
        return "deterministic"
    return "passes" if failures == 0 else "flaky"


@dataclass(frozen=True)
class SequentialRule:
    """Adaptive stopping; see the module docstring for the error rates."""

    alpha: float = 0.05
    beta: float = 0.05
    delta: float = 0.2
    max_runs: int = 50
    flaky_min_runs: int = 10
    pass_delta: float | None = None  # the rarest failure rate `passes` must not miss; default delta

    @property
    def runs_to_decide_deterministic(self) -> int:
        return math.ceil(math.log(self.alpha) / math.log(1 - self.delta))

    @property
    def runs_to_decide_passes(self) -> int:
        delta = self.delta if self.pass_delta is None else self.pass_delta
        return math.ceil(math.log(self.beta) / math.log(1 - delta))

    def decide(self, failures: int, runs: int) -> Verdict | None:
        """The verdict once the runs so far settle it, else None (keep running)."""
        if runs <= 0:
            return None
        if 0 < failures < runs:
            return "flaky" if runs >= min(self.flaky_min_runs, self.max_runs) else None
        if failures == runs and runs >= self.runs_to_decide_deterministic:
            return "deterministic"
        if failures == 0 and runs >= self.runs_to_decide_passes:
            return "passes"
        if runs >= self.max_runs:
            return verdict_of(failures, runs)
        return None


@dataclass(frozen=True)
class StressPlan:
    """How to see a failure of rate `p` within `window_s` with probability `confidence`."""

    failure_rate: float
    run_duration_s: float
    runs_needed: int
    runs_per_minute: float
    parallel_workers: int
    window_s: float
    confidence: float


def stress_plan(failure_rate: float, run_duration_s: float, *, window_s: float = 1200.0,
                confidence: float = 0.95) -> StressPlan:
    """Runs needed so that P(at least one failure) >= confidence: n >= ln(1-c) / ln(1-p).

    `runs_per_minute` spreads them over the window; `parallel_workers` is how many runs must
    go at once when one run takes `run_duration_s` (seed 004: fail within 20 minutes).
    """
    if not 0 < failure_rate <= 1:
        raise ValueError("failure_rate must be in (0, 1]")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    if failure_rate == 1:
        runs = 1
    else:
        runs = math.ceil(math.log(1 - confidence) / math.log(1 - failure_rate))
    per_minute = runs / (window_s / 60)
    workers = max(1, math.ceil(runs * run_duration_s / window_s))
    return StressPlan(failure_rate, run_duration_s, runs, per_minute, workers, window_s, confidence)
