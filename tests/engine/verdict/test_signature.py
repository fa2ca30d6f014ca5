"""Traceback parsing and matching, on outputs recorded from real torch 2.13 runs (fixtures)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.engine.verdict.signature import (ExpectedError, match, parse_chain, parse_expected, parse_traceback,
                                  signal_signature)

FIXTURES = Path(__file__).parent / "fixtures" / "tracebacks"


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.txt").read_text()


@pytest.mark.parametrize("name, exception, signature", [
    ("dynamo_fake_tensor", "RuntimeError",
     "RuntimeError: a and b must have same reduction dim, but got [2, 3] X [4, 5]."),
    ("backend_failed", "RuntimeError", "RuntimeError: my backend exploded on purpose"),
    ("fullgraph_break", "torch._dynamo.exc.Unsupported", "Unsupported: Failed to trace builtin operator"),
    ("chained_cause", "ValueError", "ValueError: could not find the key 0x<addr> in <tmp>"),
    ("during_handling", "RuntimeError",
     "RuntimeError: The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"),
    ("inductor_error", "AttributeError",
     "AttributeError: '_OpNamespace' 'aten' object has no attribute 'nonexistent_op_xyz'"),
])
def test_real_torch_outputs(name, exception, signature):
    parsed = parse_traceback(fixture(name))
    assert parsed is not None
    assert (parsed.exception, parsed.text) == (exception, signature)


def test_wrapped_dynamo_error_matches_inner_and_wrapper_class():
    parsed = parse_traceback(fixture("dynamo_fake_tensor"))
    assert match(parsed, "RuntimeError: must have same reduction dim") == "same"
    assert match(parsed, "TorchRuntimeError: RuntimeError when making fake tensor call") == "same"
    assert match(parsed, "ValueError: must have same reduction dim") == "different"


def test_chain_is_cause_first_and_stops_at_unrelated_tracebacks():
    output = "Traceback (most recent call last):\n  File \"a.py\", line 1\nOldError: earlier, unrelated\n\n" \
             "some output\n" + fixture("chained_cause")
    chain = parse_chain(output)
    assert [info.short_name for info in chain] == ["KeyError", "ValueError"]


def test_signature_is_stable_across_runs():
    one = "Traceback (most recent call last):\n  File \"/tmp/candidate-1-abc/repro.py\", line 3\n" \
          "RuntimeError: bad object at 0x7f00aa in /tmp/tmpq1w2/x.pt after 12.5 s\n"
    two = one.replace("0x7f00aa", "0x55bb01").replace("tmpq1w2", "tmpzz99").replace("12.5 s", "3 s")
    assert parse_traceback(one).text == parse_traceback(two).text
    assert parse_traceback(one).text == "RuntimeError: bad object at <addr> in <tmp> after <time>"


def test_message_spanning_lines_keeps_first_line_in_signature():
    output = "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n" \
             "RuntimeError: Error(s) in loading state_dict for Net:\n\tsize mismatch for fc.weight\n"
    parsed = parse_traceback(output)
    assert parsed.text == "RuntimeError: Error(s) in loading state_dict for Net:"
    assert match(parsed, "RuntimeError: size mismatch for fc.weight") == "same"


def test_assertion_without_message_and_syntax_error_without_traceback_header():
    bare = parse_traceback("Traceback (most recent call last):\n  File \"x.py\", line 2, in <module>\n"
                           "    assert torch.allclose(a, b)\nAssertionError\n")
    assert bare.text == "AssertionError" and match(bare, "AssertionError") == "same"
    syntax = parse_traceback("  File \"/tmp/repro.py\", line 1\n    def f(:\n          ^\n"
                             "SyntaxError: invalid syntax\n")
    assert syntax.exception == "SyntaxError"


def test_fatal_python_error_and_cpp_terminate():
    fatal = parse_traceback("Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f (most recent call first):\n"
                            "  File \"/tmp/repro.py\", line 1 in <module>\n")
    assert fatal.kind == "fatal" and fatal.text == "Fatal Python error: Segmentation fault"
    assert match(fatal, "Segmentation fault") == "same"
    terminate = parse_traceback("terminate called after throwing an instance of 'c10::Error'\n"
                                "  what():  CUDA error: device-side assert triggered\n")
    assert terminate.exception == "c10::Error" and "device-side assert" in terminate.message


def test_torch_log_lines_with_prefixed_tracebacks_are_not_the_last_traceback():
    output = "E1122 02:26:23.364 fake_tensor.py:3090] Traceback (most recent call last):\n" \
             "E1122 02:26:23.364 fake_tensor.py:3090] ValueError: internal\nall good\n"
    assert parse_traceback(output) is None


def test_parse_expected_and_three_way_match():
    assert parse_expected("RuntimeError: must match the size") == ExpectedError("RuntimeError", "must match the size")
    assert parse_expected("torch._dynamo.exc.Unsupported: graph break") == ExpectedError("Unsupported", "graph break")
    assert parse_expected("Segmentation fault") == ExpectedError(None, "Segmentation fault")
    observed = parse_traceback(fixture("during_handling"))
    assert match(observed, "RuntimeError: must match the size") == "same"
    assert match(observed, "RuntimeError: expected scalar type Float") == "different"
    assert match(observed, "TypeError: must match the size") == "different"
    assert match(None, "RuntimeError: must match the size") == "passes"


def test_signal_signature_matches_signal_name():
    sig = signal_signature(9)
    assert sig.text == "Signal: SIGKILL" and match(sig, "SIGKILL") == "same"


def test_frames_of_the_last_traceback_and_digit_masking():
    from app.engine.verdict.signature import Frame, mask_digits, traceback_frames

    output = ('Traceback (most recent call last):\n  File "/old.py", line 1, in <module>\n    x\nKeyError: 1\n\n'
              'During handling of the above exception, another exception occurred:\n\n'
              'Traceback (most recent call last):\n  File "/tmp/repro.py", line 7, in <module>\n'
              '    assert torch.allclose(a, b)\n           ^^^^^^^^^^^^^^\n'
              '  File "/lib/torch/x.py", line 30, in f\nAssertionError\n')
    assert traceback_frames(output) == (Frame("/tmp/repro.py", 7, "assert torch.allclose(a, b)"),
                                        Frame("/lib/torch/x.py", 30, ""))
    assert traceback_frames("no traceback") == ()
    assert mask_digits("(32x128 and 64x10)") == "(<n>x<n> and <n>x<n>)"
