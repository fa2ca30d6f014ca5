"""A generated test, checked in the sandbox: it fails with the bug's error without its marker and
xfails with it; anything else is a problem that says what it saw."""

from __future__ import annotations

import sys

from app.pipelines.kit.testcheck import check_test, standalone_runner

UNMARKED = "def test_issue_1():\n    raise ValueError('bad size 3')\n"
MARKED = "import pytest\n\n\n@pytest.mark.xfail(strict=True, reason='x')\n" + UNMARKED


def test_fails_without_the_marker_with_the_error_and_xfails_with_it():
    args = dict(devices=[], failing=[], style="pytest", exception="ValueError", message="bad size 7", timeout_s=120)
    with standalone_runner("bwrap", sys.executable, 2048, False) as runner:
        without = check_test(runner, "test_x.py", UNMARKED, "test_issue_1", marked=False, **args)
        marked = check_test(runner, "test_x.py", MARKED, "test_issue_1", marked=True, **args)
        wrong = check_test(runner, "test_x.py", UNMARKED, "test_issue_1", marked=False,
                           **{**args, "exception": "KeyError", "message": ""})
        passing = check_test(runner, "test_x.py", "def test_issue_1():\n    pass\n", "test_issue_1", marked=False,
                             **args)
    assert without.ok and without.statuses == {"": "FAILED"} and without.summary == "without the marker: test FAILED"
    assert marked.ok and marked.statuses == {"": "XFAIL"}
    assert not wrong.ok and wrong.problems == ["the test fails, but not with KeyError"]
    assert not passing.ok and passing.problems == ["the test: PASSED, expected FAILED"]


def test_judge_is_the_one_rule_for_every_kinds_test_check():
    """The fuzz job's checks and the CI/issue checks read pytest the same way (judge)."""
    from app.pipelines.kit.testcheck import judge

    failed = ("FAILED t.py::test_x[cpu] - ZeroDivisionError: division by zero\n"
              "E   ZeroDivisionError: division by zero (at 3)\nPASSED t.py::test_x[accel]\n")
    common = dict(devices=["cpu", "accel"], style="pytest", timed_out=False, timeout_s=60)
    right = judge(failed, "test_x", marked=False, failing=["cpu"], exception="ZeroDivisionError",
                  message="division by zero (at 7)", **common)  # digits masked: another value
    assert right.ok and right.statuses == {"cpu": "FAILED", "accel": "PASSED"}
    other = judge(failed, "test_x", marked=False, failing=["cpu"], exception="IndexError", message="", **common)
    assert not other.ok and other.problems == ["the test fails, but not with IndexError"]
    rewritten = judge(failed, "test_x", marked=False, failing=["cpu"], exception="ZeroDivisionError",
                      message="other words", rewrote_assertion=True, **common)
    assert rewritten.ok  # assertEqual prints its own words: the class alone must match
    fixed = judge(failed, "test_x", marked=False, failing=[], exception="", message="", **common)
    assert fixed.problems == ["cpu: FAILED, expected PASSED"]  # with the fix every device passes
    late = judge("", "test_x", marked=True, failing=["cpu"], exception="", message="", **common | {"timed_out": True})
    assert "the test run timed out after 60 s" in late.problems
