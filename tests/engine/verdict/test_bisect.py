"""K-ary search over environments: finds the change, probes k at a time, resumes from state."""

from __future__ import annotations

import json

import pytest

from app.engine.verdict.bisect import BisectResult, BisectState, advance, bisect, next_probes, start

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
    from app.engine.verdict.bisect import BisectResult, describe_change

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
