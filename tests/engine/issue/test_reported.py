"""The reported failure, read from every place people put it (issue #22, "still reproduces" needs a match)."""

from __future__ import annotations

import pytest

from app.engine.issue.reported import ReportedError, reported_error, reported_version, user_line

FENCE = "```"

IPYTHON = f"""{FENCE}
---------------------------------------------------------------------------
RuntimeError                              Traceback (most recent call last)
Cell In[3], line 5
      3 x = torch.ones(2, 3)
----> 5 y = x.view(3, 2, 2)

RuntimeError: shape '[3, 2, 2]' is invalid for input of size 6
{FENCE}"""


def test_an_ipython_traceback_gives_its_exception():
    found = reported_error(IPYTHON)
    assert (found.exception, found.message) == ("RuntimeError", "shape '[3, 2, 2]' is invalid for input of size 6")


def test_an_ipython_header_alone_gives_the_class():
    text = f"{FENCE}\nRuntimeError                              Traceback (most recent call last)\nCell In[3], line 5\n{FENCE}"
    assert reported_error(text) == ReportedError("exception", "RuntimeError")


def test_terminal_colour_codes_are_removed():
    text = f"{FENCE}\nTraceback (most recent call last):\n\x1b[0;31mValueError\x1b[0m: bad shape\n{FENCE}"
    assert reported_error(text).expect == "ValueError: bad shape"


def test_internal_assert_failed_in_prose_is_a_runtime_error_matched_by_its_phrase():
    text = 'Calling it hits INTERNAL ASSERT FAILED at "/pytorch/aten/src/ATen/native/TensorShape.cpp":1234, please report a bug.'
    found = reported_error(text)
    assert found.exception == "RuntimeError" and found.message.startswith("INTERNAL ASSERT FAILED at")
    assert "TensorShape.cpp" in found.message


def test_an_error_named_only_in_the_title_is_the_reported_class():
    assert reported_error("It breaks when compiling.", title="torch.compile raises BackendCompilerFailed on x") == \
        ReportedError("exception", "BackendCompilerFailed")
    assert reported_error("It breaks.", title="slow matmul") is None


def test_an_exit_code_the_report_gives_is_the_reported_failure():
    found = reported_error("The script exits with code 3 when the results differ.")
    assert (found.kind, found.exit_code, found.expect) == ("exit", 3, "exit code 3")


def test_the_users_own_statement_is_read_from_the_traceback():
    tb = ('Traceback (most recent call last):\n  File "/home/u/bug.py", line 7, in <module>\n    assert out.shape == (3, 3)\n'
          '  File "/usr/lib/python3/site-packages/torch/x.py", line 1, in f\n    raise\nAssertionError')
    assert user_line(tb) == "assert out.shape == (3, 3)"
    assert reported_error(f"{FENCE}\n{tb}\n{FENCE}").line == "assert out.shape == (3, 3)"


@pytest.mark.parametrize("text, version", [
    ("PyTorch version: 2.1.0+cu121\nIs debug build: False", "2.1.0"),
    ("pip install torch==2.4.1", "2.4.1"),
    ("no versions here", None),
])
def test_the_reporters_version(text, version):
    assert reported_version(text) == version


def test_reported_error_round_trips_with_its_new_fields():
    error = ReportedError("exit", exit_code=1)
    assert ReportedError.from_dict(error.to_dict()) == error
    assert "line" not in ReportedError("exception", "ValueError", "x").to_dict()  # the stored shape is unchanged


def test_an_error_the_repro_names_in_a_comment_is_the_reported_one():
    body = (f"{FENCE}python\nimport torch\nres = torch.movedim(torch.rand([]), 0, 0)\n"
            f"# RuntimeError: rest_dimINTERNAL ASSERT FAILED at \"../aten/src/ATen/native/TensorShape.cpp\":2448\n{FENCE}")
    found = reported_error(body)
    assert found.exception == "RuntimeError" and "INTERNAL ASSERT FAILED" in found.message
    assert reported_error(f"{FENCE}python\nx = 1  # plain comment\n{FENCE}") is None


@pytest.mark.parametrize("text, signals", [
    # #158154: the FPE is only a comment under the call, and its "(core dumped)" read as a segfault
    (f"{FENCE}python\nimport torch\ntorch.native_channel_shuffle(x, 3)\n\n# Floating point exception (core dumped)\n{FENCE}",
     ("SIGFPE",)),
    (f"Output:\n{FENCE}\nfree(): invalid next size (fast)\nAborted\n{FENCE}", ("SIGABRT", "SIGSEGV", "SIGBUS")),
    ("The log message is:\n\nterminate called after throwing an instance of 'c10::Error'\n  what():  found an invalid max index",
     ("SIGABRT",)),
    ("it dies with `Bus error (core dumped)`", ("SIGBUS",)),
    ("double free or corruption (out)\nSegmentation fault (core dumped)", ("SIGABRT", "SIGSEGV", "SIGBUS")),
    # glibc's older form (pytorch/pytorch#2542) and an FPE report whose log is an abort (#44547)
    ("*** Error in `/usr/bin/python2.7': free(): invalid pointer: 0x00007f801fcdbb80 ***\n======= Backtrace: =========",
     ("SIGABRT", "SIGSEGV", "SIGBUS")),
    ("floating point exception (core dumped) in training\nterminate called after throwing an instance of 'c10::Error'",
     ("SIGFPE", "SIGABRT")),
])
def test_a_crash_other_than_a_segfault_names_the_signals_it_dies_of(text, signals):
    assert reported_error(text) == ReportedError("crash", signals=signals)


def test_a_segfault_is_still_a_segfault_and_a_crash_round_trips():
    assert reported_error("python t.py\nSegmentation fault (core dumped)").kind == "segfault"
    crash = ReportedError("crash", signals=("SIGFPE",))
    assert ReportedError.from_dict(crash.to_dict()) == crash and crash.to_dict()["signals"] == ["SIGFPE"]
    assert "signals" not in ReportedError("segfault").to_dict()  # the stored shape of the older kinds is unchanged


def test_a_message_quoted_without_its_class_under_the_last_call_is_the_reported_error():
    # #77963: the error is only a comment under the failing call, with no exception class.
    message = "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask"
    body = f"`logaddexp2` fails to backward\n\n{FENCE}python\nimport torch\nres.sum().backward()\n# {message}\n{FENCE}"
    assert reported_error(body) == ReportedError("exception", "", message)
    assert reported_error(body).expect == message
    inline = f"{FENCE}python\ntorch.add(a, a, alpha=0.1)  # For integral input tensors, argument alpha must not be a float\n{FENCE}"
    assert reported_error(inline).message.startswith("For integral input tensors")


@pytest.mark.parametrize("comment", ["# output: tensor([1., 2.]) is not what I expected", "# this line fails",
                                     "# prints the wrong value, must be 3"])
def test_remarks_and_printed_values_in_a_last_comment_are_not_a_quoted_error(comment):
    assert reported_error(f"{FENCE}python\nimport torch\nprint(torch.ones(2))\n{comment}\n{FENCE}") is None


def test_a_class_named_anywhere_wins_over_a_quoted_message():
    body = f"{FENCE}python\nimport torch\nf(x)\n# something is not supported for this dtype\n{FENCE}\n\nRuntimeError: boom"
    assert reported_error(body) == ReportedError("exception", "RuntimeError", "boom")
