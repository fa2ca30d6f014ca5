"""A bisection probe: reproduces at once, absent after enough clean runs, unknown on anything else."""

from __future__ import annotations

import math

import pytest

from app.engine.verdict.bisect_probe import (
    ABSENT,
    REPRODUCES,
    UNKNOWN,
    ProbeAnswer,
    ProbePlan,
    probe,
    read_run,
)
from app.engine.verdict.classify import classify
from app.engine.verdict.flaky import wilson_interval

REPORTED = {"kind": "exception", "exception": "RuntimeError", "message": "the bug is here", "expect": "RuntimeError: the bug is here"}
BUG = {"outcome": "error", "exception": "RuntimeError", "message": "the bug is here"}
CLEAN = {"outcome": "passed"}
TIMEOUT = {"outcome": "timeout", "timeout_s": 20}
NO_MODULE = {"outcome": "error", "exception": "ModuleNotFoundError", "message": "No module named 'functorch'"}
OTHER_ERROR = {"outcome": "error", "exception": "AttributeError", "message": "module 'torch' has no attribute 'vmap'"}


def runs_of(*runs: dict, reported: dict | None = REPORTED):
    """A `run()` for `probe` that plays `runs` in order (the last one repeats); counts its calls."""
    calls = []

    def run():
        seen = runs[min(len(calls), len(runs) - 1)]
        calls.append(seen)
        return classify(reported, seen), seen

    return run, calls


@pytest.mark.parametrize("rate", [0.9, 0.5, 0.4, 0.3, 0.26])
def test_clean_runs_are_the_fewest_that_show_the_rate_with_95_percent_odds(rate):
    n = ProbePlan.for_rate(rate).clean_runs
    assert (1 - rate) ** n <= 0.05 < (1 - rate) ** (n - 1)


def test_a_deterministic_bug_needs_one_run_and_rare_ones_stop_at_the_cap():
    assert ProbePlan.for_rate(1.0).clean_runs == 1
    assert ProbePlan.for_rate(0.05, max_runs=10).clean_runs == 10
    assert ProbePlan.for_rate(0.0, max_runs=7).clean_runs == 7  # nothing measured: the cap


def test_the_capped_plan_says_which_rate_it_rules_out():
    plan = ProbePlan.for_rate(0.1, max_runs=10)
    assert math.isclose((1 - plan.detectable_rate) ** 10, 0.05)
    assert plan.detectable_rate > plan.design_rate  # the cap weakened it, and it says so
    assert plan.to_dict()["clean_runs"] == 10 and plan.to_dict()["detectable_rate"] == round(plan.detectable_rate, 4)


def test_a_flaky_reproduction_is_sized_by_the_low_end_of_its_interval_not_its_rate():
    low = wilson_interval(5, 6)[0]
    reproduction = {"runs": 6, "reproduced": 5, "rate": 5 / 6, "interval": [round(low, 4), 0.99]}
    plan = ProbePlan.for_reproduction(reproduction, deterministic_after=5, unknown_rate=0.2)
    assert plan.clean_runs == ProbePlan.for_rate(low).clean_runs
    assert plan.clean_runs > ProbePlan.for_rate(5 / 6).clean_runs
    without_interval = ProbePlan.for_reproduction({"runs": 6, "reproduced": 5}, deterministic_after=5, unknown_rate=0.2)
    assert without_interval.clean_runs == plan.clean_runs


def test_deterministic_needs_the_stop_rules_runs_in_a_row():
    five = ProbePlan.for_reproduction({"runs": 5, "reproduced": 5}, deterministic_after=5, unknown_rate=0.2)
    assert five.clean_runs == 1
    one = ProbePlan.for_reproduction({"runs": 1, "reproduced": 1}, deterministic_after=5, unknown_rate=0.2)
    assert one.clean_runs == ProbePlan.for_rate(wilson_interval(1, 1)[0]).clean_runs > 1  # a hang that timed out once


def test_when_it_passes_now_the_rate_fixed_is_sized_for_is_assumed():
    fixed = {"verdict": "fixed", "runs": 14, "reproduced": 0, "rate": 0.0, "interval": [0.0, 0.2153]}
    assert ProbePlan.for_reproduction(fixed, deterministic_after=5, unknown_rate=0.3) == ProbePlan.for_rate(0.3)
    assert ProbePlan.for_reproduction(None, deterministic_after=5, unknown_rate=0.3) == ProbePlan.for_rate(0.3)


def test_a_reproducing_run_settles_at_once():
    run, calls = runs_of(CLEAN, CLEAN, BUG, CLEAN)
    answer = probe(run, ProbePlan(10, 0.3))
    assert (answer.outcome, answer.runs, len(calls)) == (REPRODUCES, 3, 3)


def test_absent_takes_every_planned_clean_run():
    run, calls = runs_of(CLEAN)
    answer = probe(run, ProbePlan(7, 0.35))
    assert (answer.outcome, answer.runs, len(calls)) == (ABSENT, 7, 7)
    assert answer.reproduces is False


@pytest.mark.parametrize(("other", "why"), [
    (TIMEOUT, "timed out after 20 s"),
    (NO_MODULE, "ModuleNotFoundError: No module named 'functorch'"),
    (OTHER_ERROR, "AttributeError: module 'torch' has no attribute 'vmap'"),
])
def test_a_run_that_is_neither_the_bug_nor_clean_makes_it_unknown(other, why):
    run, calls = runs_of(CLEAN, other, BUG)
    answer = probe(run, ProbePlan(10, 0.3))
    assert (answer.outcome, answer.runs, answer.why, len(calls)) == (UNKNOWN, 2, why, 2)
    assert answer.reproduces is None


def test_why_is_one_line_however_long_the_error():
    long = {"outcome": "error", "exception": "AttributeError", "message": "first line\nsecond line " + "x" * 500}
    run, _ = runs_of(long)
    why = probe(run, ProbePlan(3, 0.7)).why
    assert why.startswith("AttributeError: first line second line x") and "\n" not in why and len(why) <= 200


def test_a_clean_pass_with_no_reported_error_is_clean_but_a_timeout_is_not():
    assert read_run(classify(None, CLEAN), CLEAN) == ABSENT
    assert read_run(classify(None, TIMEOUT), TIMEOUT) == UNKNOWN
    assert read_run(classify(None, BUG), BUG) == UNKNOWN  # a failure nothing reported: not the bug
    reported = {"kind": "exception", "exception": BUG["exception"], "message": BUG["message"]}
    assert read_run(classify(reported, BUG), BUG) == REPRODUCES


def test_the_error_the_report_expected_instead_is_clean():
    segfault = {"kind": "segfault"}
    raised = {"outcome": "error", "exception": "RuntimeError", "message": "invalid index"}
    assert read_run(classify(segfault, raised, expected_exception="RuntimeError"), raised) == ABSENT
    assert read_run(classify(segfault, raised), raised) == UNKNOWN


def test_a_plain_bool_reads_as_a_settled_answer():
    assert ProbeAnswer.of(True) == ProbeAnswer(REPRODUCES, 1)
    assert ProbeAnswer.of(False, runs=0) == ProbeAnswer(ABSENT, 0)
    answer = ProbeAnswer(UNKNOWN, 1, "x")
    assert ProbeAnswer.of(answer) is answer
