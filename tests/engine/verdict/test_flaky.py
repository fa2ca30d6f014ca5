"""Rates, Wilson intervals, the adaptive stop rule and the stress plan (pure arithmetic)."""

from __future__ import annotations

import math
import random

import pytest

from app.engine.verdict.flaky import SequentialRule, estimate, stress_plan, verdict_of, wilson_interval


def test_wilson_interval_known_values():
    lo, hi = wilson_interval(5, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.2366, 0.7634)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    lo, hi = wilson_interval(10, 10)
    assert hi == 1.0 and round(lo, 4) == 0.7225
    assert wilson_interval(0, 20)[0] == 0.0


def test_estimate_and_plain_verdicts():
    assert estimate(3, 4).rate == 0.75
    assert verdict_of(4, 4) == "deterministic" and verdict_of(0, 4) == "passes" and verdict_of(1, 4) == "flaky"


def test_sequential_rule_run_counts_follow_documented_error_rates():
    rule = SequentialRule()
    assert rule.runs_to_decide_deterministic == 14 == rule.runs_to_decide_passes
    assert (1 - rule.delta) ** 14 <= rule.alpha < (1 - rule.delta) ** 13
    assert rule.decide(13, 13) is None and rule.decide(14, 14) == "deterministic"
    assert rule.decide(0, 14) == "passes"
    assert rule.decide(1, 2) is None and rule.decide(3, 10) == "flaky"
    assert SequentialRule(max_runs=5).decide(2, 5) == "flaky"


def test_sequential_rule_error_rate_by_simulation():
    """A repro failing 75% of the time is called deterministic at most ~alpha of the time."""
    rule, rng, wrong = SequentialRule(), random.Random(7), 0
    for _ in range(2000):
        failures = runs = 0
        while (verdict := rule.decide(failures, runs)) is None:
            runs += 1
            failures += rng.random() < 0.75
        wrong += verdict == "deterministic"
    assert wrong / 2000 <= rule.alpha + 0.01


def test_stress_plan_for_twenty_minutes():
    plan = stress_plan(0.01, run_duration_s=6.0)
    assert plan.runs_needed == math.ceil(math.log(0.05) / math.log(0.99)) == 299
    assert 1 - 0.99 ** plan.runs_needed >= 0.95
    assert plan.runs_per_minute == pytest.approx(299 / 20)
    assert plan.parallel_workers == 2  # 299 runs x 6 s = 1794 s of work in a 1200 s window
    assert stress_plan(1.0, 1.0).runs_needed == 1
    with pytest.raises(ValueError):
        stress_plan(0.0, 1.0)


def test_each_direction_has_its_own_threshold():
    """`pass_delta` sets how rare a failure `passes` must still catch, apart from `delta`."""
    rule = SequentialRule(alpha=0.01, beta=0.01, delta=0.25, pass_delta=0.10)
    assert (rule.runs_to_decide_deterministic, rule.runs_to_decide_passes) == (17, 44)
    assert rule.decide(0, 43) is None and rule.decide(0, 44) == "passes"
    assert rule.decide(17, 17) == "deterministic"
    assert SequentialRule().runs_to_decide_passes == SequentialRule().runs_to_decide_deterministic == 14
