"""The CI job's typed state: stored JSON in, typed parts out, same JSON back."""

from __future__ import annotations

from app.pipelines.ci_failure.job import CIJob
from app.pipelines.ci_failure.state import CIState, FixAttempt, GeneratedFile
from app.pipelines.kit.phases import Halt
from app.pipelines.kit.xfail import XfailCheck

# A state as the code before the typed state stored it (merged stage outputs, plain JSON).
STORED = {
    "job": {"repo": "o/r", "head_sha": "abc", "test": "tests/test_x.py::test_y", "exception": "ZeroDivisionError",
            "message": "division by zero", "kind": "exception", "signature": "f" * 64, "job_name": "tests",
            "run_url": "", "base": "main", "deterministic_hint": None, "existing_test": "", "prompt": "",
            "ref": "", "classified": ""},
    "worktree": "/data/git/worktrees/run-1", "commit": "abc", "node_id": "tests/test_x.py::test_y",
    "test_file": "tests/test_x.py", "owners": ["@core"], "authors": ["ann"], "phase_reproduce_started": 100.5,
    "rerun": {"runs": 5, "failures": 5, "rate": 1.0, "interval": [0.57, 1.0]}, "rerun_output": "E ZeroDivisionError",
    "verdict": "deterministic",
    "generated": {"path": "tests/scrub/test_y_repro.py", "source": "import pytest\n", "kind": "repro"},
    "verification": {"xfailed": True, "summary": "1 xfailed", "counts": {"xfailed": 1}, "exit_code": 0,
                     "timed_out": False, "output": "1 xfailed"},
    "test_created": "tests/scrub/test_y_repro.py",
    "fix": {"command_exit": 0, "log": "", "patch": "diff --git", "verified": True, "summary": "3/3 passed",
            "runs": 3, "wanted_runs": 3},
    "halt": {"reason": "the pr phase passed its 60 s limit", "status": "Partial", "phase": "pr", "stage": "publish"},
    "branch": "scrub/ffffffffffff", "commits": ["c1"], "pushed": True, "pr_url": "https://x/pull/1", "pr_number": 1,
    "report_status": "Partial",
}


def test_a_state_stored_before_the_typed_state_loads_into_its_types():
    state = CIState.load(STORED)
    assert isinstance(state.job, CIJob) and state.job.exception == "ZeroDivisionError"
    assert state.generated == GeneratedFile("tests/scrub/test_y_repro.py", "import pytest\n", "repro")
    assert isinstance(state.verification, XfailCheck) and state.verification.xfailed
    assert isinstance(state.fix, FixAttempt) and state.fix.verified and state.fix.runs == 3
    assert state.halt == Halt("the pr phase passed its 60 s limit", "Partial", phase="pr", stage="publish")
    assert state.phase_started("reproduce") == 100.5 and state.phase_started("fix") is None


def test_the_typed_state_stores_the_same_json_it_was_loaded_from():
    stored = CIState.load(STORED).to_dict()
    assert {k: stored[k] for k in STORED} == STORED


def test_an_empty_state_has_no_job_and_no_halt():
    state = CIState.load({})
    assert state.job is None and state.halt is None and state.rerun == {} and state.owners == []


def test_a_generated_stress_test_says_so():
    assert GeneratedFile("t.py", "", "stress").described == "stress test"
    assert GeneratedFile("t.py", "", "repro").described == "reproduction test"
    assert GeneratedFile.from_dict({"path": "t.py", "source": ""}).kind == "repro"  # no kind: a repro test

