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
    (RUNTIME, TIMEOUT, "inconclusive"),  # not a hang the report describes, and not an error either
    (HANG, TIMEOUT, "reproduces"),
    (HANG, PASSED, "fixed"),
    (HANG, error("ValueError", "x"), "different-error"),
    (SEGFAULT, SIGSEGV, "reproduces"),
    (SEGFAULT, {"outcome": "crash", "signal": "SIGSEGV"}, "reproduces"),  # as `scrub repro --json` names it
    (SEGFAULT, SIGABRT, "different-error"),
    (SEGFAULT, PASSED, "fixed"),
    (None, error("AssertionError", ""), "inconclusive"),  # nothing reported, no own check seen: "fails with X now"
    (None, SIGSEGV, "inconclusive"),  # a crash counts only when the report describes one
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


# --- #13: readings of real PyTorch issues that were wrong ------------------------------------

INDUCTOR_TAIL = """Traceback (most recent call last):
  File "/tmp/repro.py", line 9, in <module>
    compiled(x)
torch._inductor.exc.InductorError: AssertionError: expected size 3==4, stride 1==1 at dim=0

Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this especially if you're reporting a bug to PyTorch).
"""


def test_a_wrapped_inductor_error_matches_the_report_at_either_level():
    # The run's signature unwraps to the AssertionError; the report names the InductorError.
    run = {"outcome": "error", "exception": "AssertionError", "message": "expected size 3==4, stride 1==1 at dim=0",
           "output_tail": INDUCTOR_TAIL}
    outer = {"kind": "exception", "exception": "torch._inductor.exc.InductorError",
             "message": "AssertionError: expected size 3==4, stride 1==1 at dim=0"}
    inner = {"kind": "exception", "exception": "AssertionError", "message": "expected size 3==4, stride 1==1 at dim=0"}
    assert classify(outer, run) == "reproduces"
    assert classify(inner, run) == "reproduces"


def test_backend_compiler_failed_matches_its_wrapped_error_not_the_wrapper_alone():
    reported = {"kind": "exception", "exception": "torch._dynamo.exc.BackendCompilerFailed",
                "message": "backend='inductor' raised:\nRuntimeError: Cannot view a tensor with shape [4, 4]"}
    same = {"outcome": "error", "exception": "RuntimeError", "message": "Cannot view a tensor with shape [4, 4]"}
    other = {"outcome": "error", "exception": "torch._dynamo.exc.BackendCompilerFailed",
             "message": "backend='inductor' raised:\nRuntimeError: something else entirely different here"}
    assert classify(reported, same) == "reproduces"
    assert classify(reported, other) == "different-error"


def test_a_repro_with_its_own_assert_that_now_passes_is_fixed():
    assert classify(None, PASSED, self_checking=True) == "fixed"
    assert classify(None, PASSED) == "inconclusive"  # nothing checked, nothing reported: cannot tell
    own_assert = error("AssertionError", "") | {"output_tail": OWN_ASSERT}
    assert classify(None, own_assert, self_checking=True) == "reproduces"  # its own check failed
    assert classify(None, error("AssertionError", ""), self_checking=True) == "inconclusive"  # raised elsewhere


OWN_ASSERT = ('Traceback (most recent call last):\n  File "/tmp/repro.py", line 5, in <module>\n'
              '    assert torch.allclose(a, b)\nAssertionError\n')


def test_a_script_that_catches_the_reported_error_and_prints_it_reproduces():
    printed = "an error occurred: expected scalar type Float but found Double\n"
    caught_then_died = error("NameError", "name 'out' is not defined") | {
        "output_tail": printed + "Traceback (most recent call last):\n  File \"/tmp/repro.py\", line 9\nNameError: name 'out' is not defined\n"}
    caught_and_exited = PASSED | {"output_tail": printed}
    assert classify(RUNTIME, caught_then_died) == "reproduces"
    assert classify(RUNTIME, caught_and_exited) == "reproduces"  # never "fixed": the bug is live
    assert classify(RUNTIME, PASSED | {"output_tail": "all good\n"}) == "fixed"


def test_a_run_stopped_by_a_missing_gpu_or_backend_is_unavailable_hardware_not_reproducing():
    no_cuda = error("AssertionError", "Torch not compiled with CUDA enabled")
    mps = error("NotImplementedError", "Could not run 'aten::empty.memory_format' with arguments from the 'MPS' backend.")
    assert classify(None, no_cuda) == "unavailable-hardware"
    assert classify(None, mps) == "unavailable-hardware"
    assert classify(RUNTIME, no_cuda) == "unavailable-hardware"


def test_a_crash_that_now_raises_the_error_the_report_expected_is_fixed():
    # pytorch/pytorch#77892 (a fuzzer's segfault): "Expected behavior: a RuntimeError to be thrown".
    now = error("RuntimeError", "Error in fused_moving_avg_obs_fake_quant_cpu: ch_axis must be < self.dim()")
    assert classify(SEGFAULT, now, expected_exception="RuntimeError") == "fixed"
    assert classify(SEGFAULT, now) == "different-error"  # without that sentence: not ours to call fixed
    assert classify(SEGFAULT, error("ValueError", "x"), expected_exception="RuntimeError") == "different-error"


# -- "still reproduces" needs a match (issue #22) ---------------------------------------------

from app.engine.verdict.script import ScriptFacts  # noqa: E402
from app.engine.verdict.values import StatedValues  # noqa: E402


def test_a_validation_error_that_replaced_an_internal_assert_is_not_the_bug():
    internal = {"kind": "exception", "exception": "RuntimeError",
                "message": 'INTERNAL ASSERT FAILED at "/pytorch/aten/src/ATen/native/Resize.cpp":35, please report a bug'}
    now_assert = error("RuntimeError", 'false INTERNAL ASSERT FAILED at "/root/pytorch/aten/src/ATen/native/Resize.cpp":41, '
                                       "please report a bug to PyTorch.")
    validation = error("RuntimeError", "Trying to resize storage that is not resizable")
    assert classify(internal, now_assert) == "reproduces"  # line numbers and paths moved, same assert
    assert classify(internal, validation) == "different-error"


def test_a_bare_assertion_error_at_another_statement_is_not_the_reported_one():
    reported = {"kind": "exception", "exception": "AssertionError", "message": "", "line": "assert torch.equal(eager, compiled)"}
    at_compile = error("AssertionError", "") | {"output_tail": (
        'Traceback (most recent call last):\n  File "/tmp/repro.py", line 6, in <module>\n    compiled = torch.compile(f)(x)\n'
        "AssertionError\n")}
    at_check = error("AssertionError", "") | {"output_tail": (
        'Traceback (most recent call last):\n  File "/tmp/repro.py", line 8, in <module>\n'
        "    assert torch.equal(eager, compiled)\nAssertionError\n")}
    assert classify(reported, at_compile) == "different-error"
    assert classify(reported, at_check) == "reproduces"


def test_an_exit_code_given_on_purpose_is_read_as_the_script_means_it():
    facts = ScriptFacts(self_checking=True, exit_codes=(1,), ok_says=("not reproduced",), bug_says=("BUG",))
    exits = {"outcome": "error", "exception": "SystemExit", "message": "1", "exit_code": 1}
    reported = {"kind": "exception", "exception": "RuntimeError", "message": "wrong"}
    assert classify(reported, exits | {"output_tail": "not reproduced\n"}, script=facts) == "fixed"
    assert classify(reported, exits | {"output_tail": "done\n"}, script=facts) == "inconclusive"  # not "reproduces"
    assert classify(reported, PASSED | {"output_tail": "BUG\n"}, script=facts) == "reproduces"
    assert classify({"kind": "exit", "exit_code": 1}, exits | {"output_tail": ""}, script=facts) == "reproduces"


def test_a_crash_or_hang_counts_only_when_the_report_describes_one():
    assert classify(RUNTIME, SIGSEGV) == "different-error"
    assert classify(None, SIGSEGV) == "inconclusive"
    assert classify(None, TIMEOUT) == "inconclusive"


def test_printed_values_are_compared_with_the_stated_ones():
    values = StatedValues("tensor([nan, 1.])", "tensor([0., 1.])")
    assert classify(None, PASSED | {"output_tail": "tensor([nan, 1.])\n"}, values=values) == "reproduces"
    assert classify(None, PASSED | {"output_tail": "tensor([0., 1.])\n"}, values=values) == "fixed"
    assert classify(None, PASSED | {"output_tail": "tensor([7., 7.])\n"}, values=values) == "fixed"  # witness decides


SIGFPE = {"outcome": "crash", "signal": int(signal.SIGFPE), "exit_code": 136}
SIGBUS = {"outcome": "crash", "signal": "SIGBUS", "exit_code": 135}
FPE = {"kind": "crash", "signals": ["SIGFPE"]}
HEAP = {"kind": "crash", "signals": ["SIGABRT", "SIGSEGV", "SIGBUS"]}


@pytest.mark.parametrize("reported, run, verdict", [
    (FPE, SIGFPE, "reproduces"),  # a live FPE was "different-error" while only SIGSEGV counted
    (FPE, SIGSEGV, "different-error"),
    (FPE, error("RuntimeError", "Number of channels must be divisible by groups"), "different-error"),
    (FPE, PASSED, "fixed"),
    (HEAP, SIGBUS, "reproduces"),  # heap corruption dies of whichever signal the allocator meets
    (HEAP, SIGABRT, "reproduces"),
    (HEAP, SIGFPE, "different-error"),
    ({"kind": "crash", "signals": ["SIGABRT"]}, SIGABRT, "reproduces"),
])
def test_a_reported_crash_reproduces_only_by_its_own_signals(reported, run, verdict):
    assert classify(reported, run) == verdict


def test_a_message_quoted_without_its_class_matches_any_class_by_the_message():
    quoted = {"kind": "exception", "exception": "", "message": "Subtraction, the `-` operator, with a bool tensor is "
                                                                  "not supported. If you are trying to invert a mask"}
    assert classify(quoted, error("RuntimeError", quoted["message"] + ", use the `~` operator")) == "reproduces"
    # Anything else is read as if nothing were reported: the comment may be a paraphrase or a remark.
    assert classify(quoted, error("RuntimeError", "expected scalar type Float but found Double")) == "inconclusive"
    assert classify(quoted, PASSED) == "inconclusive"
    assert classify(quoted, PASSED, self_checking=True) == "fixed"  # the script's own check decides, as with nothing reported
    assert classify({"kind": "exception", "exception": "", "message": "too short"}, error("X", "too short")) == "inconclusive"


def test_a_run_stopped_at_an_input_the_thread_does_not_give_needs_a_reproduction():
    # #20755: torch.load('bug.pt') of an attachment; #152804: curl'd pickles at the reporter's path.
    reported = {"kind": "exception", "exception": "RuntimeError", "message": "expected scalar type Float but found Double"}
    missing = error("FileNotFoundError", "[Errno 2] No such file or directory: 'bug.pt'")
    assert classify(reported, missing, source="b = torch.load('bug.pt')") == "needs-reproduction"
    assert classify({"kind": "segfault"}, error("FileNotFoundError", "[Errno 2] No such file or directory: "
                                                "'/home/cx/004-args'"), source='torch.load("/home/cx/004-args")') == (
        "needs-reproduction")
    # a file the script does not name is some other failure; a reported FileNotFoundError is the bug
    assert classify(reported, missing, source="torch.load(path)") == "different-error"
    quoted = {"kind": "exception", "exception": "FileNotFoundError", "message": "[Errno 2] No such file or directory: 'bug.pt'"}
    assert classify(quoted, missing, source="torch.load('bug.pt')") == "reproduces"


def test_a_download_without_a_network_says_nothing_of_the_bug():
    offline = error("OSError", "We couldn't connect to 'https://huggingface.co' to load this file (Temporary failure in "
                               "name resolution)")
    assert classify(RUNTIME, offline) == "inconclusive"
    assert classify(None, offline) == "inconclusive"
