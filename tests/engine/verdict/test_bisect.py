"""K-ary search over environments: finds the change, probes k at a time, resumes from state,
and never names a boundary next to an environment that could not be tested."""

from __future__ import annotations

import json

import pytest

from app.engine.verdict import bisect_probe
from app.engine.verdict.bisect import (
    BisectResult,
    BisectState,
    advance,
    bisect,
    describe_change,
    next_probes,
    result,
    start,
)
from app.engine.verdict.bisect_probe import ProbeAnswer, ProbePlan

LABELS = [f"2.{i}" for i in range(10)]


def fixed_at(index: int):
    """A probe that reproduces before `index` and not from it on; remembers its calls."""
    calls: list[str] = []

    def probe(label: str) -> bool:
        calls.append(label)
        return LABELS.index(label) < index

    return probe, calls


@pytest.mark.parametrize("index", range(1, 10))
def test_finds_the_first_environment_whose_outcome_differs(index):
    probe, calls = fixed_at(index)
    result = bisect(LABELS, probe, k=2)
    assert (result.first_changed, result.last_unchanged) == (LABELS[index], LABELS[index - 1])
    assert result.oldest_outcome is True
    assert len(calls) == len(set(calls))  # nothing probed twice


def test_k2_probes_two_points_splitting_the_range_into_thirds():
    state = start(LABELS, {LABELS[0]: True, LABELS[-1]: False})
    assert next_probes(state, k=2) == ["2.3", "2.6"]


def test_k_probes_per_round_take_fewer_rounds_than_binary_search():
    probe, _ = fixed_at(7)
    assert bisect(LABELS, probe, k=3).rounds < bisect(LABELS, probe, k=1).rounds


def test_no_change_across_the_range_probes_only_the_ends():
    calls = []
    result = bisect(LABELS, lambda label: calls.append(label) or True)
    assert result.first_changed is None and sorted(calls) == ["2.0", "2.9"]


def test_a_known_outcome_is_not_probed_again():
    probe, calls = fixed_at(4)
    bisect(LABELS, probe, known={"2.9": False})
    assert "2.9" not in calls


def test_a_saved_state_resumes_without_repeating_probes():
    probe, calls = fixed_at(5)
    saved: list[dict] = []
    bisect(LABELS, probe, on_round=lambda s: saved.append(json.loads(json.dumps(s.to_dict()))))
    after_two_rounds = BisectState.from_dict(saved[1])
    calls.clear()
    result = bisect(LABELS, probe, state=after_two_rounds)
    assert result.first_changed == "2.5"
    assert not set(calls) & set(after_two_rounds.probes)


def test_advance_narrows_to_the_first_change_among_the_probes():
    state = start(LABELS, {"2.0": True, "2.9": False})
    state = advance(state, {"2.3": True, "2.6": False})
    assert (state.lo, state.hi) == (3, 6)


def test_run_all_receives_each_round_as_a_batch():
    batches = []
    probe, _ = fixed_at(2)
    bisect(LABELS, probe, k=2, run_all=lambda p, batch: batches.append(list(batch)) or [p(x) for x in batch])
    assert all(1 <= len(b) <= 2 for b in batches) and batches[0] == ["2.0", "2.9"]


def test_bisection_needs_two_distinct_environments():
    with pytest.raises(ValueError):
        start(["2.0"])
    with pytest.raises(ValueError):
        start(["2.0", "2.0"])


def test_the_change_is_described_as_a_fix_or_a_regression_with_both_versions():
    fails = {"2.12.0": True, "2.13.0": True, "2.14.1": False}
    fixed = BisectResult("2.14.1", "2.13.0", True, fails, 1)
    assert describe_change(fixed, fails.get) == "fixed in 2.14.1 (still fails in 2.13.0)"
    passes_then_fails = {"2.12.0": False, "2.13.0": True}
    regressed = BisectResult("2.13.0", "2.12.0", False, passes_then_fails, 1)
    assert describe_change(regressed, passes_then_fails.get) == "regressed in 2.13.0 (passes in 2.12.0)"
    assert describe_change(fixed) == "changed in 2.14.1 (after 2.13.0)"  # outcomes unknown
    assert describe_change(BisectResult(None, None, True, {}, 1)) == "no change across the environments"


def test_a_bisect_result_round_trips_through_json():
    found = bisect(LABELS, lambda label: label in ("2.0", "2.1"))
    assert found.first_changed  # a result with every field set
    assert BisectResult.from_dict(json.loads(json.dumps(found.to_dict()))) == found


# -- probes that repeat, and environments that cannot be tested ------------------------------

REPORTED = {"kind": "exception", "exception": "RuntimeError", "message": "the bug is here"}
BUG = {"outcome": "error", "exception": "RuntimeError", "message": "the bug is here"}
CLEAN = {"outcome": "passed"}


def flaky_world(fixed_index: int, fails_on_run: int = 3):
    """A bug in LABELS[:fixed_index] that shows only on every `fails_on_run`-th run of a release
    (its first runs pass); the newest release is clean. Returns a run factory and the run log."""
    runs: dict[str, int] = {}

    def run_on(label: str):
        def run():
            runs[label] = runs.get(label, 0) + 1
            buggy = LABELS.index(label) < fixed_index and runs[label] % fails_on_run == 0
            return ("reproduces" if buggy else "fixed"), (BUG if buggy else CLEAN)
        return run

    return run_on, runs


def test_a_single_clean_run_of_a_flaky_bug_misplaces_the_fix():
    """The old probe (one run per release) calls the first release it tries "fixed": the test's premise."""
    run_on, _ = flaky_world(fixed_index=8)
    single = ProbePlan.for_rate(1.0)
    found = bisect(LABELS, lambda label: bisect_probe.probe(run_on(label), single), known={"2.9": False, "2.0": True})
    assert found.first_changed != "2.8"


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("fixed_index", range(1, 10))
def test_a_flaky_bug_that_passes_its_first_runs_is_not_called_fixed_early(fixed_index, k):
    run_on, runs = flaky_world(fixed_index)
    plan = ProbePlan.for_rate(0.3)  # the rate the reproduce stage measured: the bug shows within 9 runs
    found = bisect(LABELS, lambda label: bisect_probe.probe(run_on(label), plan), k=k, known={"2.0": True})
    assert (found.last_unchanged, found.first_changed) == (LABELS[fixed_index - 1], LABELS[fixed_index])
    clean = [r for r in found.releases if r["outcome"] is False]
    assert clean and all(r["runs"] == plan.clean_runs == runs[r["label"]] for r in clean)


def test_with_random_flakiness_the_planned_probe_is_rarely_wrong_and_one_run_often_is():
    """A bug failing in 40% of runs, fixed in 2.7: how often each probe names the wrong release."""
    import random

    rng = random.Random(20261123)

    def wrong(plan: ProbePlan) -> int:
        def probe(label: str) -> ProbeAnswer:
            def run():
                buggy = LABELS.index(label) < 7 and rng.random() < 0.4
                return ("reproduces" if buggy else "fixed"), (BUG if buggy else CLEAN)
            return bisect_probe.probe(run, plan)
        found = [bisect(LABELS, probe, known={"2.0": True, "2.9": False}) for _ in range(300)]
        return sum(f.first_changed != "2.7" for f in found)

    planned = ProbePlan.for_reproduction({"runs": 6, "reproduced": 4}, deterministic_after=5, unknown_rate=0.2)
    assert wrong(planned) < 0.1 * 300 < 0.5 * 300 < wrong(ProbePlan.for_rate(1.0))


def fixed_at_with_unknown(index: int, unknown: set[int]):
    calls: list[str] = []

    def probe(label: str) -> ProbeAnswer:
        calls.append(label)
        at = LABELS.index(label)
        if at in unknown:
            return ProbeAnswer("unknown", 1, "timed out after 20 s")
        return ProbeAnswer("reproduces" if at < index else "absent", 1)

    return probe, calls


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("unknown", [{4}, {5}, {4, 5}, {3, 4, 5}, {1}, {8}])
@pytest.mark.parametrize("index", range(1, 10))
def test_an_untested_release_next_to_the_change_leaves_a_range_not_a_boundary(index, unknown, k):
    probe, calls = fixed_at_with_unknown(index, unknown)
    found = bisect(LABELS, probe, k=k)
    tested = [i for i in range(10) if i not in unknown]
    before = max(i for i in tested if i < index)
    after = min(i for i in tested if i >= index)
    assert found.changed_between == [LABELS[before], LABELS[after]]
    assert found.untested == LABELS[before + 1:after]
    if after - before == 1:
        assert (found.last_unchanged, found.first_changed) == (LABELS[before], LABELS[after]) and found.certain
    else:
        assert found.first_changed is None and found.last_unchanged is None and not found.certain
    assert len(calls) == len(set(calls))  # an untestable release is not tried twice


def test_the_range_is_described_with_the_release_that_could_not_be_tested():
    probe, _ = fixed_at_with_unknown(5, {4})
    found = bisect(LABELS, probe)
    assert describe_change(found, found.probes.get) == "fixed between 2.3 and 2.5; 2.4 could not be tested"
    row = next(r for r in found.releases if r["label"] == "2.4")
    assert row == {"label": "2.4", "outcome": None, "runs": 1, "why": "timed out after 20 s"}
    assert "2.4" not in found.probes  # old readers of `probes` never see it as a pass


def test_untestable_oldest_releases_move_the_reference_to_the_oldest_tested_one():
    probe, calls = fixed_at_with_unknown(6, {0, 1})
    found = bisect(LABELS, probe, k=2)
    assert (found.last_unchanged, found.first_changed, found.oldest_outcome) == ("2.5", "2.6", True)
    assert calls[:3] == ["2.0", "2.9", "2.1"] and calls.count("2.0") == calls.count("2.1") == 1
    assert describe_change(found, found.probes.get) == "fixed in 2.6 (still fails in 2.5); 2.0, 2.1 could not be tested"


def test_when_only_one_release_can_be_tested_nothing_is_claimed():
    probe, _ = fixed_at_with_unknown(5, set(range(9)))
    found = bisect(LABELS, probe, known={"2.9": False})
    assert found.changed_between is None and found.first_changed is None
    assert describe_change(found, found.probes.get).startswith("only 2.9 could be tested; 2.0, 2.1")


def test_a_saved_state_with_unknowns_resumes_and_an_old_saved_state_still_loads():
    probe, calls = fixed_at_with_unknown(5, {4})
    saved: list[dict] = []
    bisect(LABELS, probe, on_round=lambda s: saved.append(json.loads(json.dumps(s.to_dict()))))
    last = BisectState.from_dict(saved[-1])
    assert last.unknown == {"2.4": "timed out after 20 s"} and result(last).untested == ["2.4"]
    old = {k: v for k, v in saved[0].items() if k not in ("unknown", "runs")}
    calls.clear()
    assert bisect(LABELS, probe, state=BisectState.from_dict(old)).changed_between == ["2.3", "2.5"]
    assert not set(calls) & set(old["probes"])


def test_an_unknown_probe_point_moves_to_the_nearest_untried_release():
    state = start(LABELS, {"2.0": True, "2.9": False})
    state = advance(state, {"2.3": ProbeAnswer("unknown", 1, "x")})
    assert state.unknown == {"2.3": "x"} and (state.lo, state.hi) == (0, 9)
    assert next_probes(state, k=2) == ["2.2", "2.6"]


def test_an_old_stored_result_without_the_new_fields_is_described_as_before():
    old = BisectResult("2.14.1", "2.13.0", True, {"2.13.0": True, "2.14.1": False}, 1)
    assert describe_change(old, old.probes.get) == "fixed in 2.14.1 (still fails in 2.13.0)"
    # stored as it was before the new fields: none of them appears when unset
    assert set(old.to_dict()) == {"first_changed", "last_unchanged", "oldest_outcome", "probes", "rounds"}
    assert BisectResult.from_dict(old.to_dict()) == old
