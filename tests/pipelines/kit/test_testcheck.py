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


def test_an_error_a_compiler_wraps_is_found_as_pytest_prints_it():
    """Dynamo wraps the op's error in its own and prints it as `got RuntimeError('...')`; the
    reproduction names it `RuntimeError: ...`. pytest's lines below are torch 2.13's for the
    program of pytorch/pytorch#164875: the test failed with the bug's error and was judged
    "fails, but not with RuntimeError: The size of tensor a ...", so no test was filed."""
    from app.pipelines.kit.testcheck import judge

    output = (
        "E           torch._dynamo.exc.TorchRuntimeError: RuntimeError when making fake tensor call\n"
        "E             Explanation: Dynamo failed to run FX node with fake tensors: call_function <built-in function "
        "add>(*(FakeTensor(..., size=(s93, 0), dtype=torch.int64), FakeTensor(..., size=(u0, 0), dtype=torch.int64)), "
        "**{}): got RuntimeError('The size of tensor a (s93: hint = 20) must match the size of tensor b (u0) at "
        "non-singleton dimension 0)')\n"
        "FAILED test/test_fuzz_repros.py::TestFuzzSeed164875::test_fuzz_seed_164875 - "
        "torch._dynamo.exc.TorchRuntimeError: Runti...\n")
    common = dict(devices=[], failing=[""], style="pytorch", timed_out=False, timeout_s=60, marked=False)
    message = "The size of tensor a (s67: hint = 20) must match the size of tensor b (u0) at non-singleton dimension 0)"
    wrapped = judge(output, "test_fuzz_seed_164875", exception="RuntimeError", message=message, **common)
    assert wrapped.ok, wrapped.problems
    other = judge(output, "test_fuzz_seed_164875", exception="RuntimeError", message="another message", **common)
    assert other.problems == ["the test fails, but not with RuntimeError: another message"]
    elsewhere = judge(output, "test_fuzz_seed_164875", exception="ValueError", message=message, **common)
    assert elsewhere.problems == [f"the test fails, but not with ValueError: {message}"[:200 + 11]]
