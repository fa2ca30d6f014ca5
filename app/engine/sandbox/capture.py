"""Bounded capture of a process's output: the first and the last bytes, never all of them.

A repro may print a gigabyte. What matters for a report is how the output starts and, above
all, how it ends (the traceback), so a capture keeps a head and a rolling tail of fixed size
and counts what it dropped in between.
"""

from __future__ import annotations

import os
import select
import time
from dataclasses import dataclass

DEFAULT_HEAD_BYTES = 64 * 1024
DEFAULT_TAIL_BYTES = 64 * 1024


@dataclass(frozen=True)
class CapturedOutput:
    """The head and tail of a stream; `total_bytes` counts everything that was written."""

    head: bytes = b""
    tail: bytes = b""
    total_bytes: int = 0

    @property
    def truncated(self) -> bool:
        return self.total_bytes > len(self.head) + len(self.tail)

    def text(self) -> str:
        """Head and tail as text, with a marker where bytes were dropped."""
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if not self.truncated:
            return head + tail
        dropped = self.total_bytes - len(self.head) - len(self.tail)
        return f"{head}\n[... {dropped} bytes of output dropped ...]\n{tail}"

    def tail_text(self, max_bytes: int = DEFAULT_TAIL_BYTES) -> str:
        """The last `max_bytes` of the stream as text (what tracebacks are parsed from)."""
        joined = self.head + self.tail if not self.truncated else self.tail
        return joined[-max_bytes:].decode("utf-8", "replace")


class OutputBuffer:
    """Accumulates a stream into a head of `head_bytes` and a rolling tail of `tail_bytes`."""

    def __init__(self, head_bytes: int = DEFAULT_HEAD_BYTES, tail_bytes: int = DEFAULT_TAIL_BYTES):
        self._head_limit = head_bytes
        self._tail_limit = tail_bytes
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0

    def feed(self, data: bytes) -> None:
        self._total += len(data)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            excess = len(self._tail) - self._tail_limit
            if excess > 0:
                del self._tail[:excess]

    def result(self) -> CapturedOutput:
        return CapturedOutput(bytes(self._head), bytes(self._tail), self._total)


def drain_until(fd: int, buffer: OutputBuffer, deadline: float | None) -> bool:
    """Read `fd` into `buffer` until EOF (True) or until `deadline` passes (False).

    Single-threaded: `select` with a short timeout, so the caller needs no reader thread.
    """
    while True:
        wait = 0.2 if deadline is None else max(0.0, min(0.2, deadline - time.monotonic()))
        ready, _, _ = select.select([fd], [], [], wait)
        if ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return True
            buffer.feed(chunk)
        elif deadline is not None and time.monotonic() >= deadline:
            return False
