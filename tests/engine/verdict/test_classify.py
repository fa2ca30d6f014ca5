"""Reported error + a run's outcome -> reproduces / fixed / different-error / inconclusive."""

from __future__ import annotations

import signal

import pytest

from app.engine.verdict.classify import classify, describe, flaky_ratio, missing_module

RUNTIME = {"kind": "exception", "exception": "RuntimeError", "message": "expected scalar type Float but found Double"}
HANG, SEGFAULT = {"kind": "hang"}, {"kind": "segfault"}


def error(exception: str, message: str) -> dict:
    return {"outcome": "error", "exception": exception, "message": message, "signal": None}


PASSED = {"outcome": "passed"}
TIMEOUT = {"outcome": "timeout", "timeout_s": 3}
SIGSEGV = {"outcome": "crash", "signal": int(signal.SIGSEGV), "exit_code": 139}
SIGABRT = {"outcome": "crash", "signal": int(signal.SIGABRT), "exit_code": 134}


@pytest.mark.parametrize("reported, run, verdict", [
    (RUNTIME, error("RuntimeError", "expected scalar type Float but found Double"), "reproduces"),
    (RUNTIME, error("torch.RuntimeError", "Expected scalar type Float but found Double in addmm"), "reproduces"),
    (RUNTIME, error("RuntimeError", "size mismatch"), "different-error"),
    (RUNTIME, error("ValueError", "expected scalar type Float but found Double"), "different-error"),
    (RUNTIME, PASSED, "fixed"),
    (RUNTIME, TIMEOUT, "different-error"),
    (HANG, TIMEOUT, "reproduces"),
    (HANG, PASSED, "fixed"),
    (HANG, error("ValueError", "x"), "different-error"),
    (SEGFAULT, SIGSEGV, "reproduces"),
    (SEGFAULT, {"outcome": "crash", "signal": "SIGSEGV"}, "reproduces"),  # as `scrub repro --json` names it
    (SEGFAULT, SIGABRT, "different-error"),
    (SEGFAULT, PASSED, "fixed"),
    (None, error("AssertionError", ""), "reproduces"),
    (None, SIGSEGV, "reproduces"),
    (None, PASSED, "inconclusive"),
    (RUNTIME, error("ModuleNotFoundError", "No module named 'transformers'"), "missing-dependency"),
    (None, error("ModuleNotFoundError", "No module named 'transformers'"), "missing-dependency"),
    ({"kind": "exception", "exception": "ImportError", "message": "cannot import name 'x'"},
     error("ImportError", "cannot import name 'x'"), "reproduces"),  # the import error is the bug
    (None, TIMEOUT, "inconclusive"),
])
def test_classify(reported, run, verdict):
    assert classify(reported, run) == verdict


def test_addresses_in_messages_do_not_prevent_a_match():
    reported = {"kind": "exception", "exception": "RuntimeError", "message": "bad tensor at 0x7f00aa"}
    assert classify(reported, error("RuntimeError", "bad tensor at 0x55ffbb")) == "reproduces"


def test_describe():
    assert describe(error("ValueError", "bad")) == "ValueError: bad"
    assert describe(SIGSEGV) == "killed by SIGSEGV"
    assert describe(TIMEOUT) == "timed out after 3 s"


def test_missing_module_names_the_top_level_package():
    assert missing_module(error("ModuleNotFoundError", "No module named 'transformers.models'")) == "transformers"


def test_flaky_ratio_only_when_runs_disagree():
    assert flaky_ratio(["reproduces", "fixed", "reproduces"]) == "2/3"
    assert flaky_ratio(["reproduces"] * 3) is None and flaky_ratio(["fixed"] * 2) is None
