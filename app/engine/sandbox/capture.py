"""Bounded capture of a process's output: the first and the last bytes, never all of them.

A repro may print a gigabyte. What matters for a report is how the output starts and, above
all, how it ends (the traceback), so a capture keeps a head and a rolling tail of fixed size
and counts what it dropped in between. From everything before the tail it keeps the evidence: every
traceback block (`Traceback (most recent call last):` to its exception line, chained blocks
included, and the first lines of the message) and bare exception lines, up to
`DEFAULT_MIDDLE_BYTES`, which the head gives up (the total stays within the head and tail
caps). An Inductor `CppCompileError` followed by 100 KB of compiler output keeps its error.

Standard library only: the fork server's zygote ships this file into the sandbox.
"""

from __future__ import annotations

import os
import re
import select
import time
from dataclasses import dataclass

DEFAULT_HEAD_BYTES = 64 * 1024
DEFAULT_TAIL_BYTES = 64 * 1024
DEFAULT_MIDDLE_BYTES = 16 * 1024  # exception blocks kept from the dropped middle (taken from the head)
_TRACEBACK = b"Traceback (most recent call last):"
_CHAINED = (b"The above exception was the direct cause", b"During handling of the above exception")
_EXCEPTION = re.compile(rb"^(?:[A-Za-z_][\w.]*\.)?[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Failed|Failure|Unsupported)"
                        rb"(?::|\s*$)")
_MESSAGE_LINES = 6  # lines of an exception's message kept after its header
_LINE_LIMIT = 2048  # one kept line at most this long


@dataclass(frozen=True)
class CapturedOutput:
    """The head and tail of a stream; `total_bytes` counts everything that was written."""

    head: bytes = b""
    tail: bytes = b""
    total_bytes: int = 0
    middle: bytes = b""  # exception blocks kept from the dropped middle

    @property
    def truncated(self) -> bool:
        return self.total_bytes > len(self.head) + len(self.tail)

    def text(self) -> str:
        """Head, kept exception blocks and tail as text, with markers where bytes were dropped."""
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if not self.truncated:
            return head + tail
        dropped = self.total_bytes - len(self.head) - len(self.tail)
        if not self.middle:
            return f"{head}\n[... {dropped} bytes of output dropped ...]\n{tail}"
        return (f"{head}\n[... {dropped} bytes of output dropped; the exception lines among them follow ...]\n"
                f"{self.middle.decode('utf-8', 'replace')}\n[... end of the kept exception lines ...]\n{tail}")

    def tail_text(self, max_bytes: int = DEFAULT_TAIL_BYTES) -> str:
        """The last `max_bytes` of the stream as text (what tracebacks are parsed from); the
        exception blocks kept from the middle come first, within `max_bytes`."""
        if not self.truncated:
            return (self.head + self.tail)[-max_bytes:].decode("utf-8", "replace")
        middle = self.middle[:max_bytes // 2]
        joined = middle + b"\n" + self.tail[-(max_bytes - len(middle) - 1):] if middle else self.tail[-max_bytes:]
        return joined.decode("utf-8", "replace")


class ExceptionKeeper:
    """Keeps the traceback blocks and exception lines of the bytes it is fed, up to `limit`."""

    def __init__(self, limit: int = DEFAULT_MIDDLE_BYTES):
        self.limit = limit
        self.kept = bytearray()
        self._carry = b""
        self._block: list[bytes] | None = None  # the traceback block being read
        self._message_left = 0  # message lines still to keep after an exception header

    def feed(self, data: bytes) -> None:
        lines = (self._carry + data).split(b"\n")
        self._carry = lines.pop()[-_LINE_LIMIT:]
        for line in lines:
            self._line(line[:_LINE_LIMIT])

    def _line(self, line: bytes) -> None:
        if line.startswith(_TRACEBACK) or line.startswith(_CHAINED):
            self._flush()
            self._block = [line]
            return
        if self._block is not None:
            self._block.append(line)
            if line[:1] not in (b" ", b"\t") and _EXCEPTION.match(line):
                self._flush()
                self._message_left = _MESSAGE_LINES
            elif len(self._block) > 400:  # a traceback this deep: keep its start and its end
                del self._block[100:300]
            return
        if self._message_left and line.strip():
            self._message_left -= 1
            self._keep([line])
        elif _EXCEPTION.match(line):
            self._keep([line])
            self._message_left = _MESSAGE_LINES
        else:
            self._message_left = 0

    def _keep(self, lines: list[bytes]) -> None:
        text = b"\n".join(lines) + b"\n"
        if len(self.kept) + len(text) <= self.limit:
            self.kept += text

    def _flush(self) -> None:
        if self._block:
            self._keep(self._block)
        self._block = None

    def result(self) -> bytes:
        """What was kept, with a block still open (it goes on in the retained tail)."""
        if self._block:
            return bytes(self.kept) + b"\n".join(self._block)[: max(0, self.limit - len(self.kept))]
        return bytes(self.kept)


class OutputBuffer:
    """Accumulates a stream into a head of `head_bytes` and a rolling tail of `tail_bytes`."""

    def __init__(self, head_bytes: int = DEFAULT_HEAD_BYTES, tail_bytes: int = DEFAULT_TAIL_BYTES,
                 middle_bytes: int = DEFAULT_MIDDLE_BYTES):
        self._head_limit = head_bytes
        self._tail_limit = tail_bytes
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0
        self._middle = ExceptionKeeper(min(middle_bytes, head_bytes // 2))

    def feed(self, data: bytes) -> None:
        self._total += len(data)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            self._middle.feed(data[:room])  # the head's exception blocks too: the tail text needs them
            data = data[room:]
        if data:
            self._tail += data
            excess = len(self._tail) - self._tail_limit
            if excess > 0:
                self._middle.feed(bytes(self._tail[:excess]))
                del self._tail[:excess]

    def result(self) -> CapturedOutput:
        """The capture; the kept exception blocks take their room from the head."""
        dropped = self._total > len(self._head) + len(self._tail)
        middle = self._middle.result() if dropped else b""
        head = bytes(self._head[: self._head_limit - len(middle)]) if middle else bytes(self._head)
        return CapturedOutput(head, bytes(self._tail), self._total, middle)


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
