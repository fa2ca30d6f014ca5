"""The capture keeps the evidence: exception blocks from the dropped middle, within the caps.

An Inductor `CppCompileError` is followed by ~100 KB of compiler output; with only the last
64 KiB kept, the run read as `SystemExit: 1` instead of the real error (issue #22).
"""

from __future__ import annotations

from app.engine.sandbox.capture import DEFAULT_HEAD_BYTES, DEFAULT_TAIL_BYTES, ExceptionKeeper, OutputBuffer
from app.engine.sandbox.forkserver import ForkServer
from app.engine.sandbox.runner import Sandbox
from app.engine.verdict.reproduce import read_process
from tests.engine.sandbox.helpers import needs_bwrap, spec

TRACEBACK = (b'Traceback (most recent call last):\n  File "/tmp/repro.py", line 9, in <module>\n    f()\n'
             b"torch._inductor.exc.InductorError: CppCompileError: C++ compile error\n\nOutput:\n")
SPEW = b"".join(b"/tmp/k.cpp:%d:3: error: no matching function for call, candidate %d\n" % (i, i) for i in range(4000))
# Prints 100 KB, then dies of an exception whose message carries 200 KB of "compiler output".
LOUD_ERROR = ("import sys\nsys.stdout.write('building...\\n' * 8000)\nsys.stdout.flush()\n"
              "raise RuntimeError('C++ compile error\\n' + 'k.cpp:1: error: bad\\n' * 10000)\n")


def test_a_traceback_in_the_dropped_middle_is_kept_and_parsed():
    buffer = OutputBuffer()
    buffer.feed(b"warming up\n" * 8000)  # fills the head
    buffer.feed(TRACEBACK + SPEW)
    out = buffer.result()
    assert out.truncated and TRACEBACK.split(b"\n\n")[0] in out.middle
    assert len(out.head) + len(out.middle) + len(out.tail) <= DEFAULT_HEAD_BYTES + DEFAULT_TAIL_BYTES
    assert "the exception lines among them follow" in out.text()
    parsed = read_process_text(out.tail_text())
    assert parsed == "CppCompileError: C++ compile error"


def read_process_text(text: str) -> str | None:
    from app.engine.verdict.signature import parse_traceback

    found = parse_traceback(text)
    return found.text if found else None


def test_every_exception_line_is_kept_but_no_more_than_the_limit():
    keeper = ExceptionKeeper(limit=200)
    keeper.feed(b"noise\nValueError: first\nmore noise\n" + b"KeyError: 'x'\n" * 50)
    kept = keeper.result()
    assert kept.startswith(b"ValueError: first\n") and len(kept) <= 200


def test_an_untruncated_capture_is_unchanged():
    buffer = OutputBuffer()
    buffer.feed(TRACEBACK)
    out = buffer.result()
    assert (out.head, out.middle, out.truncated) == (TRACEBACK, b"", False)


@needs_bwrap
def test_a_cold_and_a_forked_run_both_read_the_error_under_the_spew():
    cold = Sandbox(spec()).run(LOUD_ERROR, timeout_s=60)
    with ForkServer(spec(), preload=()) as server:
        forked = server.run(LOUD_ERROR, timeout_s=60)
    assert forked.mode == "fork"
    for process in (cold, forked):
        assert process.output.total_bytes > DEFAULT_HEAD_BYTES + DEFAULT_TAIL_BYTES
        run = read_process(process, python="python", torch_version=None)
        assert (run.exception, run.message) == ("RuntimeError", "C++ compile error")
