"""The fuzz job's typed state: JSON round trip, and runs stored by the dict-based code still load."""

from __future__ import annotations

import json

import pytest

from app.pipelines.kit.phases import Halt
from app.pipelines.fuzz.state import DeviceRun, FuzzJob, FuzzState
from app.pipelines.state import UnknownStateField

JOB = {"repo": "acme/tlib", "seed": 2, "program": "", "ref": "refs/heads/main", "head_sha": "a" * 40,
       "base": "main", "trigger": "dispatch", "requested_by": "ada", "issue": 9}

# The pipeline state as the previous code stored it: every stage's output merged, plain JSON,
# `halt` a dict (from a run that stopped while publishing).
STORED = {
    "job": JOB,
    "offline": False,
    "commit": "b" * 40,
    "config": {"command": "python fuzz.py --seed {seed}", "devices": ["cpu", "accel"], "style": "pytest",
               "lint": "ruff", "test_file": ""},
    "phase_reproduce_started": 1700000000.5,
    "fuzz_output": "...\nZeroDivisionError: division by zero\n",
    "program": "import tlib\ntlib.mean(tlib.tensor([]))\n",
    "original_program": "import tlib\nx = 1\ntlib.mean(tlib.tensor([]))\n",
    "fuzz_error": "ZeroDivisionError: division by zero",
    "devices": [{"device": "cpu", "fails": False, "error": "", "output": ""},
                {"device": "accel", "fails": True, "error": "ZeroDivisionError: division by zero",
                 "output": "Traceback ...\nZeroDivisionError: division by zero"}],
    "failing_devices": ["accel"],
    "operations": ["mean"],
    "tolerances": {"rtol": 0.05, "atol": 1.0},
    "error": "ZeroDivisionError: division by zero",
    "exception": "ZeroDivisionError",
    "message": "division by zero",
    "minimized": {"lines": "3 -> 2 lines"},
    "generated": {"path": "tests/test_ops.py", "name": "test_fuzz_seed_2", "marked": "m", "unmarked": "u",
                  "style": "pytest", "new_file": False, "placement": "covers mean", "rewrote_assertion": False},
    "verification": {"unmarked": {"ok": True, "summary": "without the marker: accel FAILED"}},
    "test_created": "tests/test_ops.py",
    "phase_fix_started": 1700000100.0,
    "fix": {"verified": False, "summary": "the fix command changed nothing"},
    "phase_pr_started": 1700000200.0,
    "lint": {"test": {"linter": "ruff", "exit": 0, "summary": "ruff: clean"}},
    "halt": {"reason": "the pr phase passed its 60 s limit during publish", "status": "Partial",
             "phase": "pr", "stage": "publish"},
}


def test_a_state_stored_by_the_dict_based_code_loads_into_its_types():
    state = FuzzState.load(json.loads(json.dumps(STORED)))
    assert state.job == FuzzJob(**JOB) and state.job.branch == "scrub/fuzz-2"
    assert state.devices == [DeviceRun("cpu", False, ""),
                             DeviceRun("accel", True, "ZeroDivisionError: division by zero",
                                       STORED["devices"][1]["output"])]
    assert state.device_names() == ["cpu", "accel"]
    assert isinstance(state.halt, Halt)
    assert (state.halt.status, state.halt.reason, state.halt.phase) == ("Partial", STORED["halt"]["reason"], "pr")
    assert state.phase_started("fix") == 1700000100.0
    assert (state.exception, state.message, state.minimized) == ("ZeroDivisionError", "division by zero",
                                                               {"lines": "3 -> 2 lines"})


def test_every_stored_key_is_a_field_and_comes_back_as_the_same_json():
    FuzzState.check_output("any stage", STORED)  # no key of today's runs is undeclared
    encoded = FuzzState.load(STORED).to_dict()
    assert {key: encoded[key] for key in STORED} == STORED


def test_a_halt_stored_without_a_phase_loads_with_empty_phase_and_stage():
    state = FuzzState.load({"job": JOB, "halt": {"reason": "give exactly one of a fuzz seed or a fuzzed program",
                                                 "status": "Failed"}})
    assert state.halt == Halt(reason="give exactly one of a fuzz seed or a fuzzed program", status="Failed")


def test_round_trip_through_json_keeps_the_typed_parts():
    state = FuzzState(job=FuzzJob(repo="acme/tlib", program="import tlib\n", trigger="cli"), offline=True,
                      devices=[DeviceRun("", True, "ValueError: bad", "out")], failing_devices=[""],
                      halt=Halt(reason="the fix phase passed its 5 s limit during fix", status="Partial",
                                phase="fix", stage="fix"),
                      phase_fix_started=12.5, minimized=None, commits=["c1", "c2"], pr_number=4)
    stored = json.loads(json.dumps(state.to_dict()))
    assert stored["job"]["program"] == "import tlib\n" and stored["devices"][0]["error"] == "ValueError: bad"
    assert FuzzState.load(stored) == state


def test_an_empty_state_has_an_empty_job_and_no_halt():
    state = FuzzState.load({})
    assert state.job == FuzzJob(repo="") and state.halt is None and state.devices == []


def test_a_key_the_fuzz_state_does_not_declare_is_refused():
    with pytest.raises(UnknownStateField, match="failing_device"):
        FuzzState.check_output("reproduce", {"failing_device": ["cpu"]})


def test_the_fuzzer_command_names_the_seed():
    state = FuzzState.load({"job": JOB, "config": {"command": "python fuzz.py --seed {seed} -v"}})
    # As the job ran it: the hash seed pinned, address randomization off (TorchFuzz hashes dtypes).
    assert state.fuzzer_command == "PYTHONHASHSEED=0 setarch -R python fuzz.py --seed 2 -v"
