"""The figures of a run page, read from stage outputs."""

from __future__ import annotations

import pytest

from app.db.models import StageEvent
from app.web.figures import figures, wilson_interval


def event(stage: str, output: dict) -> StageEvent:
    return StageEvent(run_id=1, stage=stage, status="done", output=output)


@pytest.mark.parametrize(("failures", "runs", "expected"), [
    (4, 5, (0.3755, 0.9638)), (0, 10, (0.0, 0.2775)), (10, 10, (0.7225, 1.0)), (1, 2, (0.0945, 0.9055)),
])
def test_wilson_interval_matches_the_textbook_values(failures, runs, expected):
    low, high = wilson_interval(failures, runs)
    assert (round(low, 4), round(high, 4)) == expected


def test_no_runs_means_no_knowledge():
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_issue_run_figures():
    found = figures([
        event("select", {"repro": {"source": "import torch\n", "author": "alice", "url": "https://x.org/1"}}),
        event("reproduce", {"reproduction": {"runs": 5, "reproduced": 3, "result": {
            "exception": "RuntimeError", "message": "boom", "signature": "RuntimeError: boom", "output_tail": "printed"}}}),
        event("bisect", {"bisect": {"first_changed": "2.12", "last_unchanged": "2.11", "probes": {"2.11": False, "2.12": True}}}),
        event("minimize", {"minimized": {"source": "x\n"}}),
    ])
    assert found.signature == {"exception": "RuntimeError", "message": "boom", "signature": "RuntimeError: boom"}
    assert (found.flakiness.failures, found.flakiness.runs) == (3, 5) and found.flakiness.rate == 0.6
    assert found.bisection.releases == [("2.11", False), ("2.12", True)] and found.bisection.first_changed == "2.12"
    assert found.repro["author"] == "alice" and found.minimized == "x\n" and found.output_tail == "printed"


def test_ci_run_figures_come_from_the_rerun_and_the_job():
    found = figures([
        event("job", {"job": {"exception": "AssertionError", "message": "tensors differ", "signature": "abc123"}}),
        event("rerun", {"rerun": {"runs": 20, "failures": 3}, "rerun_output": "FAILED test_x"}),
    ])
    assert found.signature["exception"] == "AssertionError" and found.flakiness.failures == 3
    assert found.output_tail == "FAILED test_x" and found.bisection is None and found.repro is None


def test_an_interval_the_stage_stored_is_shown_as_stored():
    found = figures([event("rerun", {"rerun": {"runs": 20, "failures": 3, "interval": [0.05, 0.36]}})])
    assert (found.flakiness.low, found.flakiness.high) == (0.05, 0.36)


def test_a_run_with_no_stages_has_no_figures():
    found = figures([])
    assert found.signature == {} and found.flakiness is None and found.bisection is None and found.findings == []


def test_malformed_outputs_are_ignored_not_a_crash():
    found = figures([event("reproduce", {"reproduction": "oops", "bisect": [1], "findings": ["x", {"line": 2}]})])
    assert found.flakiness is None and found.bisection is None and found.findings == [{"line": 2}]


def test_a_bisection_with_an_untested_release_shows_it_and_the_range():
    stored = {"first_changed": None, "last_unchanged": None, "oldest_outcome": True, "changed_between": ["2.1", "2.3"],
              "untested": ["2.2"], "probes": {"2.1": True, "2.3": False},
              "releases": [{"label": "2.1", "outcome": True, "runs": 1},
                           {"label": "2.2", "outcome": None, "runs": 1, "why": "timed out after 20 s"},
                           {"label": "2.3", "outcome": False, "runs": 10}]}
    found = figures([event("bisect", {"bisect": stored})]).bisection
    assert found.releases == [("2.1", True), ("2.2", None), ("2.3", False)]
    assert found.first_changed is None and found.changed_between == ("2.1", "2.3")
    assert found.why == {"2.2": "timed out after 20 s"} and found.runs["2.3"] == 10


def test_an_old_bisection_reads_from_its_probes():
    found = figures([event("bisect", {"bisect": {"first_changed": "2.12", "last_unchanged": "2.11",
                                                 "probes": {"2.11": True, "2.12": False}}})]).bisection
    assert found.releases == [("2.11", True), ("2.12", False)] and found.changed_between is None and found.why == {}


def test_a_malformed_release_row_is_skipped_not_a_crash():
    stored = {"releases": [{"label": "2.1", "outcome": True, "runs": "many"}, "junk", {"outcome": False}]}
    found = figures([event("bisect", {"bisect": stored})]).bisection
    assert found.releases == [("2.1", True)] and found.runs == {}
