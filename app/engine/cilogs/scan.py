"""Streaming line scanner for CI logs: bytes in, cleaned lines out, in flat memory.

A job log is mostly passing-test noise. The scanner reads it in fixed-size chunks and, while
the parser is idle, jumps straight to the next line containing one of a few literal trigger
words (`bytes.find`, a C loop at memory speed); only those lines, and every line while the
parser is inside a block (a FAILURES section, a traceback, a crash dump), are decoded and
cleaned in Python. The skipped stretches are handed to the parser as `(buf, start, end)`
so it can look back lazily (which test was running, the last lines before a trigger).

Memory: one chunk plus one carried partial line, both bounded (a line longer than
`MAX_CARRY` is cut), whatever the size of the log.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import BinaryIO, Protocol

CHUNK_BYTES = 1 << 20
MAX_CARRY = 1 << 20  # an unbroken "line" longer than this is cut into pieces
MAX_LINE_BYTES = 8192  # what a parser sees of one line

# Every line a parser must see while idle contains one of these (case-sensitive).
TRIGGERS: tuple[bytes, ...] = (
    b"FAIL",  # pytest FAILED / FAILURES, unittest FAIL:, GoogleTest [  FAILED  ]
    b"ERROR",  # pytest ERROR / ERRORS, unittest ERROR:
    b": Failure",  # GoogleTest assertion location
    b"Timeout",  # pytest-timeout stack dump, faulthandler's `Timeout (0:05:00)!`
    b"Command took >",  # PyTorch run_test.py: a test file over its time limit
    b"maximum execution time",  # GitHub: a job over its timeout-minutes
    b"Fatal Python error",  # faulthandler
    b"Segmentation fault",  # the shell's report of a SIGSEGV
    b"##[error]",  # the runner's annotations, "Process completed with exit code N"
    b"Traceback (most recent call last)",
)

_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Za-z0-9]|\x1b[=>]")
_MARKER = re.compile(r"^##\[(?:group|endgroup|error|warning|notice|debug|command|section)\]")


class LineSink(Protocol):
    """A streaming parser: sees trigger lines (every line while `wants_every_line`)."""

    @property
    def wants_every_line(self) -> bool: ...

    def skipped(self, buf: bytes, start: int, end: int) -> None:
        """`buf[start:end]` (whole lines) went by unseen."""

    def line(self, text: str) -> None:
        """One cleaned line (no timestamp, ANSI codes, `##[...]` markers or newline)."""


def clean_line(raw: bytes | str) -> str:
    """Strip the runner's timestamp prefix, ANSI escapes and `##[group]`-style markers."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    text = text.rstrip("\r\n")
    if text[:2].isdigit():
        text = _TIMESTAMP.sub("", text, count=1)
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if text.startswith("##["):
        text = _MARKER.sub("", text, count=1)
    return text


def read_chunks(stream: BinaryIO, size: int = CHUNK_BYTES) -> Iterator[bytes]:
    while chunk := stream.read(size):
        yield chunk


class _NextTrigger:
    """Earliest trigger position at or after `pos` in `buf[:end]`, caching each needle's hit."""

    def __init__(self, buf: bytes, end: int) -> None:
        self.buf, self.end = buf, end
        self.hits = [-2] * len(TRIGGERS)  # -2: not searched yet, -1: none left

    def at_or_after(self, pos: int) -> int:
        best = -1
        for i, needle in enumerate(TRIGGERS):
            hit = self.hits[i]
            if hit == -1:
                continue
            if hit < pos:
                hit = self.hits[i] = self.buf.find(needle, pos, self.end)
                if hit == -1:
                    continue
            if best == -1 or hit < best:
                best = hit
        return best


def _scan_buffer(buf: bytes, end: int, sink: LineSink) -> int:
    """Feed the whole lines of `buf[:end]` to `sink`; returns the number of lines."""
    pos = 0
    triggers = _NextTrigger(buf, end)
    while pos < end:
        if not sink.wants_every_line:
            hit = triggers.at_or_after(pos)
            if hit == -1:
                sink.skipped(buf, pos, end)
                break
            start = buf.rfind(b"\n", pos, hit) + 1 or pos
            if start > pos:
                sink.skipped(buf, pos, start)
            pos = start
        newline = buf.find(b"\n", pos, end)
        stop = end if newline == -1 else newline + 1
        sink.line(clean_line(buf[pos : min(stop, pos + MAX_LINE_BYTES)]))
        pos = stop
    return buf.count(b"\n", 0, end)


def scan(chunks: Iterable[bytes], sink: LineSink) -> int:
    """Stream `chunks` (one log, possibly several files in order) through `sink`.

    Returns the number of lines. Lines are split on `\\n`; a final line without one counts.
    """
    carry = b""
    lines = 0
    for chunk in chunks:
        buf = carry + chunk if carry else chunk
        cut = buf.rfind(b"\n") + 1
        if cut == 0:
            if len(buf) < MAX_CARRY:
                carry = buf
                continue
            cut = len(buf)
        carry = buf[cut:]
        lines += _scan_buffer(buf, cut, sink)
    if carry:
        lines += _scan_buffer(carry + b"\n", len(carry) + 1, sink)
    return lines


def last_line_with(buf: bytes, needle: bytes, start: int, end: int) -> tuple[int, bytes] | None:
    """The last line of `buf[start:end]` containing `needle`, as (offset, raw line)."""
    hit = buf.rfind(needle, start, end)
    if hit == -1:
        return None
    line_start = buf.rfind(b"\n", start, hit) + 1 or start
    line_end = buf.find(b"\n", hit, end)
    line_end = end if line_end == -1 else line_end
    return line_start, buf[line_start : min(line_end, line_start + MAX_LINE_BYTES)]
