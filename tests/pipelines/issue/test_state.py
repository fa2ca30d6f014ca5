"""The issue pipeline's typed state: JSON round trips, runs stored by the dict version, old keys."""

from __future__ import annotations

import copy
import json

import pytest

from app.engine.issue.markdown import ReportedError, Repro, Triage
from app.engine.issue.review import Finding
from app.engine.verdict.bisect import BisectResult
from app.pipelines.issue.state import IssueState, Minimized, PublishPlan, Reproduction
from app.pipelines.state import UnknownStateField, plain

RUN = {"outcome": "error", "exception": "RuntimeError", "message": "boom", "signature": "ab12", "exit_code": 1,
       "signal": None, "duration_s": 0.4, "python": "/usr/bin/python3", "torch_version": "2.13.0",
       "output_tail": "Traceback ...\nRuntimeError: boom\n", "mode": "cold", "environment": "local", "timeout_s": 20}

# What the issue pipeline stored while its state was a plain dict (every key a stage wrote).
STORED = {
    "issue": {"number": 5, "title": "boom", "body": "it fails", "user": {"login": "op", "type": "User"},
              "labels": ["needs reproduction"]},
    "comments": [{"body": "me too", "user": {"login": "other", "type": "User"}, "labels": []}],
    "label_role": "triage",
    "repro": {"source": "raise RuntimeError('boom')\n", "author": "op", "url": "https://github.com/o/r/issues/5",
              "created_at": "2026-01-01T00:00:00Z", "by_original_poster": True, "self_contained": True,
              "lines": 1, "cuda_dropped": True},
    "candidates": [{"author": "op", "url": "https://github.com/o/r/issues/5", "lines": 1}],
    "images_only": False,
    "reported": {"kind": "exception", "exception": "RuntimeError", "message": "boom", "expect": "RuntimeError: boom"},
    "expected_exception": None,
    "triage": {"decision": "actionable", "reason": "a runnable repro", "add_labels": [],
               "remove_labels": ["needs reproduction"], "needs_cuda": False, "cpu_source": None},
    "needs_cuda": False,
    "findings": [{"kind": "shell", "line": 2, "snippet": "os.system('id')", "detail": "runs a shell command"}],
    "collaborator": False,
    "approved_by": "maintainer",
    "reproduction": {"verdict": "reproduces", "flaky_ratio": None, "runs": 5, "reproduced": 5, "rate": 1.0,
                     "interval": [0.5655, 1.0], "outcomes": {"error": 5}, "result": RUN,
                     "description": "RuntimeError: boom"},
    "verdict": "reproduces",
    "bisect": {"first_changed": "2.12", "last_unchanged": "2.11", "oldest_outcome": False,
               "probes": {"2.11": False, "2.12": True, "2.13": True}, "rounds": 1},
    "minimized": {"source": "raise RuntimeError('boom')\n", "original_lines": 30, "final_lines": 1,
                  "candidates": 12, "wall_s": 3.2, "timed_out": False},
    "publish": {"comment": "This issue still reproduces", "add_labels": [], "remove_labels": ["needs reproduction"],
                "close": False},
    "published": ["comment", "labels"],
}


def test_a_state_round_trips_through_json():
    state = IssueState.load(STORED)
    again = IssueState.load(json.loads(json.dumps(state.to_dict())))
    assert again == state
    assert again.reproduction.outcomes == {"error": 5} and again.minimized.final_lines == 1


def test_a_state_stored_by_the_dict_version_loads_into_its_types():
    state = IssueState.load(copy.deepcopy(STORED))
    assert state.repro == Repro("raise RuntimeError('boom')\n", "op", "https://github.com/o/r/issues/5",
                                "2026-01-01T00:00:00Z", True, cuda_dropped=True)
    assert state.reported == ReportedError("exception", "RuntimeError", "boom")
    assert state.triage == Triage("actionable", "a runnable repro", remove_labels=["needs reproduction"])
    assert state.findings == [Finding("shell", 2, "os.system('id')", "runs a shell command")]
    assert isinstance(state.reproduction, Reproduction) and state.reproduction.result["torch_version"] == "2.13.0"
    assert state.bisect == BisectResult("2.12", "2.11", False, {"2.11": False, "2.12": True, "2.13": True}, 1)
    assert isinstance(state.minimized, Minimized) and state.minimized.original_lines == 30
    assert state.publish == PublishPlan(comment="This issue still reproduces", remove_labels=["needs reproduction"])
    assert (state.label_role, state.approved_by, state.verdict, state.published) == (
        "triage", "maintainer", "reproduces", ["comment", "labels"])
    assert not state.stop and state.hardware is None  # never written: the defaults


@pytest.mark.parametrize("key", ["repro", "reported", "triage", "findings", "reproduction", "bisect",
                                 "minimized", "publish"])
def test_each_typed_part_encodes_back_to_the_json_it_was_stored_as(key):
    # The status page, /metrics (`reproduction.outcomes`) and `scrub issue --json` read these keys.
    assert plain(getattr(IssueState.load(STORED), key)) == STORED[key]


def test_a_key_an_older_version_stored_is_ignored():
    state = IssueState.load({"verdict": "fixed", "repro_hash": "abc", "stage_timings": {"fetch": 1.0}})
    assert state.verdict == "fixed"
    assert "repro_hash" not in state.to_dict()


def test_optional_parts_stay_out_of_the_stored_json_when_unset():
    stored = STORED["reproduction"] | {"verdict": "inconclusive", "platform": "windows"}
    assert Reproduction.from_dict(stored).platform == "windows"
    assert Reproduction.from_dict(stored).to_dict() == stored
    assert PublishPlan(nothing=True).to_dict() == {"nothing": True}  # a closed issue: nothing else
    assert IssueState.load({"publish": {"nothing": True}}).publish.nothing


def test_a_stage_output_with_a_misspelt_key_is_refused():
    IssueState.check_output("reproduce", {"reproduction": {}, "verdict": "fixed", "hardware": None})
    with pytest.raises(UnknownStateField, match="reproductions"):
        IssueState.check_output("reproduce", {"reproductions": {}})
