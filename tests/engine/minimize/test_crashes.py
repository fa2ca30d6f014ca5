"""`crashes`: one heap corruption, whether it segfaults or aborts in glibc's heap check."""

from __future__ import annotations

from types import SimpleNamespace

from app.engine.minimize.crashes import MEMORY, crash_family
from app.engine.minimize.oracle import signature_of
from app.engine.minimize.session import parse_expected


def _result(text: str, exit_code: int, signal: int):
    return SimpleNamespace(output=SimpleNamespace(head=text.encode(), tail=b""), exit_code=exit_code,
                           signal=signal, timed_out=False)


def test_a_heap_corruption_is_one_failure_whether_it_segfaults_or_aborts():
    # pytorch/pytorch#143485 (`mkldnn_rnn_layer`): SIGSEGV in a fresh interpreter, and in 2 of 3
    # fork-server children SIGABRT from glibc's heap check: the same bug, another heap layout
    segfault = signature_of(_result("Fatal Python error: Segmentation fault\n", exit_code=139, signal=11))
    assert crash_family(11, "") == crash_family(7, "") == MEMORY and crash_family(4, "") == ""
    heap_abort = signature_of(_result("free(): invalid pointer\nFatal Python error: Aborted\n", exit_code=134,
                                      signal=6))
    plain_abort = signature_of(_result("terminate called after throwing an instance of 'c10::Error'\n",
                                       exit_code=134, signal=6))
    assert segfault.matches(heap_abort) and heap_abort.matches(segfault)
    assert not segfault.matches(plain_abort) and not plain_abort.matches(segfault)
    assert parse_expected("signal 11").matches(heap_abort)  # a user's --expect too
    assert not parse_expected("signal 4").matches(segfault)
