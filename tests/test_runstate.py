"""The run records every layer reads a run's state through (`app.runstate`)."""

from __future__ import annotations

import dataclasses

from app.engine.issue.repro import Repro
from app.engine.verdict import flaky
from app.engine.verdict.bisect import BisectResult
from app.engine.verdict.rerun import FAIL, PASS, Sequential
from app.pipelines.ci_failure.job import CIJob
from app.pipelines.ci_failure.state import CIState
from app.pipelines.issue.state import IssueState
from app.runstate import (
    Minimized, Reproduction, RerunSummary, RunView, ShownBisection, ShownFailure, ShownRepro, wilson_interval,
)


def test_there_is_one_wilson_interval():
    assert flaky.wilson_interval is wilson_interval
    low, high = wilson_interval(4, 5)
    assert (round(low, 4), round(high, 4)) == (0.3755, 0.9638) and wilson_interval(0, 0) == (0.0, 1.0)


def test_the_pipelines_state_holds_the_same_classes_the_readers_read():
    assert IssueState.DECODE["reproduction"] == Reproduction.from_dict
    assert IssueState.DECODE["minimized"] == Minimized.from_dict
    assert CIState.DECODE["rerun"] == RerunSummary.from_dict
    sequential = Sequential()
    for outcome in (FAIL, PASS, FAIL):
        sequential.add(outcome)
    summary = sequential.summary()  # what the engine hands the CI job's rerun stage
    assert isinstance(summary, RerunSummary) and summary.failures == 2 and summary.passed == 1
    assert CIState.load({"rerun": summary.to_dict()}).rerun == summary


def _fields(cls) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def test_each_view_record_reads_a_shape_its_engine_class_stores():
    repro = Repro("x = 1\n", "alice", "https://x/1", "2026-01-01", True).to_dict()
    assert _fields(ShownRepro) <= set(repro) and RunView.load({"repro": repro}).repro == ShownRepro("x = 1\n", "alice",
                                                                                                    "https://x/1")
    bisect = BisectResult("2.3", "2.2", True, {"2.2": True, "2.3": False}, 2, ["2.2", "2.3"], [],
                          [{"label": "2.2", "outcome": True, "runs": 1}]).to_dict()
    assert _fields(ShownBisection) <= set(bisect)
    shown = RunView.load({"bisect": bisect}).bisect
    assert (shown.first_changed, shown.changed_between, shown.releases[0]["label"]) == ("2.3", ["2.2", "2.3"], "2.2")
    job = CIJob("o/r", exception="AssertionError", message="differ", signature="abc").to_dict()
    assert _fields(ShownFailure) <= set(job) and RunView.load({"job": job}).job == ShownFailure("AssertionError",
                                                                                                "differ", "abc")


def test_a_rerun_summary_keeps_the_shape_it_was_stored_with():
    old = {"runs": 5, "failures": 5, "rate": 1.0, "interval": [0.57, 1.0]}  # stored before `timeouts` existed
    loaded = RerunSummary.from_dict(old)
    assert loaded == old and loaded.to_dict() == old and loaded["failures"] == 5 and loaded.timeouts == 0
    assert loaded.get("errors", "absent") == "absent"
    assert RerunSummary.from_dict({}) == {} and not RerunSummary.from_dict({})


def test_a_malformed_part_reads_as_missing():
    view = RunView.load({"reproduction": "oops", "rerun": [1], "repro": {"author": "x"}, "bisect": 3,
                         "findings": ["x", {"line": 2}], "minimized": {"lines": 3}})
    assert (view.reproduction, view.rerun, view.repro, view.bisect, view.minimized) == (None,) * 5
    assert view.findings == [{"line": 2}] and view.shown_run == {}


def test_a_pull_request_is_shown_only_as_an_https_link():
    assert RunView.load({"pr_url": "https://github.com/o/r/pull/5"}).pull_request == "https://github.com/o/r/pull/5"
    assert RunView.load({"pr_url": "javascript:alert(1)"}).pull_request is None
    assert RunView.load({}).pull_request is None
