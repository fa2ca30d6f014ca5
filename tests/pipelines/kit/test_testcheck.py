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
