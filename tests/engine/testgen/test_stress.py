"""Stress tests: the budget arithmetic, the generated file, and a real run in the sandbox."""

from __future__ import annotations

import ast
import math
import subprocess
from pathlib import Path

import pytest

from app.engine.verdict.rerun import (
    CANNOT_RUN,
    DETERMINISTIC,
    ERROR,
    FAIL,
    FLAKY,
    NOT_REPRODUCIBLE,
    OTHER,
    PASS,
    CI_RERUN_RULE,
    Sequential,
)
from app.engine.sandbox.runner import Limits, Sandbox, SandboxSpec
from app.engine.testgen.stress import (
    StressKnobs,
    StressMeasurement,
    check_budget,
    measure_args,
    parse_summary,
    poisson_lower_bound,
    required_rate,
    stress_test,
    tuned_knobs,
)
from app.engine.sandbox.treerun import TreeRunner
from tests.fakes.ci_project import FLAKY_TEST, PASSING_TEST, make_ci_project


def _measured(failures: int, seconds: float, iterations: int = 100) -> StressMeasurement:
    return StressMeasurement(iterations, failures, 0, 0, seconds, 2)


def test_required_rate_is_ln20_over_20_minutes():
    assert required_rate() == pytest.approx(math.log(20) / 20)  # 0.1498 failures per minute


@pytest.mark.parametrize(("k", "mu"), [(1, 0.0513), (3, 0.8177), (10, 5.4254)])
def test_poisson_lower_bound_matches_the_exact_garwood_values(k, mu):
    assert poisson_lower_bound(k) == pytest.approx(mu, abs=1e-3)


def test_budget_uses_the_lower_bound_not_the_point_estimate():
    # One failure in one minute: the point estimate says 1/min (P = 1.0 in 20 min), but one
    # event is weak evidence: the 95% lower bound is 0.05/min, P >= 0.64 only.
    thin = check_budget(_measured(1, 60))
    assert thin.p_fail_in_budget > 0.99 and not thin.passes
    assert thin.p_fail_in_budget_lower == pytest.approx(1 - math.exp(-0.0513 * 20), abs=1e-3)
    assert check_budget(_measured(3, 60)).passes  # lower bound 0.82/min >> 0.15/min
    assert not check_budget(_measured(0, 600)).passes


def test_tuned_knobs_reach_the_target_at_the_lower_bound_and_stay_in_the_budget():
    measurement = _measured(10, 60, iterations=100)  # per-iteration p >= 5.43/100 at 95%
    knobs = tuned_knobs(measurement, StressKnobs(workers=2))
    assert knobs.iterations * 2 >= math.log(0.05) / math.log(1 - 0.0543)
    assert 1 - (1 - 0.0543) ** (knobs.iterations * 2) >= 0.95
    assert knobs.iterations <= 50 * 20  # 50 iterations/min/worker measured, 20 minutes
    assert tuned_knobs(_measured(0, 60), StressKnobs(workers=2)).iterations == 1000  # cap: run the budget


def test_summary_line_is_read_back():
    summary = ('{"iterations": 9, "failures": 2, "timeouts": 1, "errors": 0, "elapsed_s": 3.0, '
               '"workers": 2, "first_failure": "AssertionError"}')
    out = f"noise\nSCRUB_STRESS {summary}\n"
    measurement = parse_summary(out)
    assert measurement.failures == 2 and measurement.rate_per_minute == pytest.approx(40.0)
    assert parse_summary("killed\n") is None


def test_generated_stress_file_is_deterministic_with_cli_knobs():
    knobs = StressKnobs(iterations=7, workers=3, timeout_s=5, duration_s=60)
    first = stress_test("tests/test_x.py::test_race[cpu]", reason="AssertionError: race", knobs=knobs)
    assert first == stress_test("tests/test_x.py::test_race[cpu]", reason="AssertionError: race", knobs=knobs)
    assert first.path == "tests/scrub/test_race_cpu_stress.py" and first.failing_devices == ("cpu",)
    tree = ast.parse(first.source)
    values = {t.id: ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
              for t in n.targets if isinstance(t, ast.Name) and t.id.isupper() and t.id != "ROOT"}
    assert values == {"NODE_ID": "tests/test_x.py::test_race[cpu]", "REASON": "AssertionError: race",
                      "ITERATIONS": 7, "WORKERS": 3, "TIMEOUT_S": 5.0, "DURATION_S": 60.0}
    for flag in ("--iterations", "--workers", "--timeout", "--duration", "--keep-going"):
        assert flag in first.source
    assert "@pytest.mark.xfail(strict=True, reason=REASON)" in first.source


def test_stress_test_reproduces_the_flaky_fixture_in_the_sandbox(tmp_path):
    project = make_ci_project(tmp_path / "remote")
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "--quiet", str(project.bare), str(checkout)], check=True)
    # The iteration timeout is a hang guard, not a speed claim: at load 10 one iteration took over 20 s.
    knobs = StressKnobs(workers=2, timeout_s=180)
    test = stress_test(FLAKY_TEST, reason="AssertionError: stale", knobs=knobs)
    (checkout / test.path).parent.mkdir(parents=True)
    (checkout / test.path).write_text(test.source)
    spec = SandboxSpec(limits=Limits(cpu_s=900))  # three processes, each busy for the 5 s window or a slow iteration
    result = TreeRunner(Sandbox(spec), Path(checkout)).run(
        measure_args(test, window_s=5, knobs=knobs, max_failures=3), timeout_s=400)
    measurement = parse_summary(result.output.text())
    assert measurement is not None, result.output.text()
    assert measurement.failures >= 1 and measurement.errors == 0
    assert measurement.first_failure.startswith("AssertionError: cache returned a stale entry")
    assert measurement.workers == 2 and measurement.iterations >= measurement.failures
    # The time to the first failure is measured from the start of the run, inside it.
    assert measurement.first_failure_s is not None and 0 < measurement.first_failure_s <= measurement.elapsed_s


def test_a_measurement_runs_its_minimum_iterations_even_past_its_window(tmp_path):
    # A loaded machine may not finish one iteration inside the window: the measurement must
    # still rest on `min_iterations` tries per worker (window 0: every iteration is "late").
    project = make_ci_project(tmp_path / "remote")
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "--quiet", str(project.bare), str(checkout)], check=True)
    knobs = StressKnobs(workers=1, timeout_s=20)
    test = stress_test(PASSING_TEST, reason="never fails", knobs=knobs)
    (checkout / test.path).parent.mkdir(parents=True)
    (checkout / test.path).write_text(test.source)
    argv = measure_args(test, window_s=0, knobs=knobs, min_iterations=4)
    result = TreeRunner(Sandbox(SandboxSpec(limits=Limits(cpu_s=120))), Path(checkout)).run(argv, timeout_s=90)
    measurement = parse_summary(result.output.text())
    assert measurement is not None, result.output.text()
    assert (measurement.iterations, measurement.failures, measurement.errors) == (4, 0, 0)
    assert measurement.first_failure_s is None  # nothing failed: no time to a first failure


def _feed(outcomes: list[str]) -> tuple[str | None, Sequential]:
    sequential = Sequential()
    for outcome in outcomes:
        if sequential.verdict() is not None:
            break
        sequential.add(outcome)
    return sequential.verdict(), sequential


def test_sequential_rerun_thresholds():
    policy = CI_RERUN_RULE
    assert (policy.runs_to_decide_deterministic, policy.runs_to_decide_passes) == (17, 44)
    assert _feed([FAIL] * 16)[0] is None
    assert _feed([FAIL] * 17)[0] == DETERMINISTIC
    assert _feed([PASS] * 44)[0] == NOT_REPRODUCIBLE
    verdict, seq = _feed([FAIL, PASS] * 20)
    assert verdict == FLAKY and seq.runs == policy.flaky_min_runs
    assert seq.summary()["rate"] == 0.5 and seq.summary()["interval"][0] < 0.5 < seq.summary()["interval"][1]
    assert _feed([ERROR, ERROR])[0] == CANNOT_RUN
    assert _feed([FAIL] * 16 + [OTHER] + [FAIL] * 60)[0] == DETERMINISTIC  # via the run cap, others noted
