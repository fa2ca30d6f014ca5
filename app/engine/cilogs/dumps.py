"""Dumps a dying test process leaves behind: faulthandler crashes, timeout stacks, tracebacks.

Each dump names the test it was in through a stack frame (`in test_x`); `cilogs_job` reconciles
that with the test the runner said was running.
"""

from __future__ import annotations

import re

from app.engine.cilogs.model import Excerpt
from app.engine.cilogs.parsers import PY_FRAME, TracebackTail

FATAL_ERROR = re.compile(r"Fatal Python error: (?P<what>.+)$")
TIMEOUT_BANNER = re.compile(r"^\+{5,} Timeout(?P<rest>.*?) \+{5,}$")
# faulthandler's `dump_traceback_later` (pytest's `faulthandler_timeout`): on its own line, or
# right after the `path::test ` that pytest -v printed before the test started.
FAULTHANDLER_TIMEOUT = re.compile(r"(?:^|\s)Timeout \((?P<hms>\d+:\d\d:\d\d(?:\.\d+)?)\)!$")
# A runner that gave up on the whole step or job: PyTorch's run_test.py
# ("Command took >30min, returning 124"), GitHub's job and step limits.
JOB_TIMEOUT = re.compile(
    r"Command took >(?P<minutes>\d+)min\b"
    r"|has exceeded the maximum execution time of (?P<limit>\d+) minutes"
    r"|^The action has timed out\."
)
EXIT_CODE = re.compile(r"Process completed with exit code (?P<code>-?\d+)")
# The shell's report of a child killed by a signal: "Segmentation fault (core dumped)", or bash's
# "script.sh: line 2:  812 Segmentation fault      (core dumped) ./cmd"; not the word anywhere.
SHELL_SIGNAL = re.compile(
    r"(?:^|\s\d+\s+)(?P<what>Segmentation fault|Aborted|Bus error|Illegal instruction|Floating point exception)"
    r"(?:\s+\(core dumped\))?(?:\s|$)"
)

KILL_SIGNALS = ("SIGKILL", "SIGTERM")  # what a timeout's enforcer sends: part of the timeout, not a crash
SIGNALS = {4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}
_SIGNAL_BY_WORDS = {
    "Segmentation fault": "SIGSEGV",
    "Aborted": "SIGABRT",
    "Bus error": "SIGBUS",
    "Illegal instruction": "SIGILL",
    "Floating point exception": "SIGFPE",
}
_THREAD_HEADER = ("Current thread", "Thread 0x", "Stack (most recent call first)")


def signal_name(what: str) -> str:
    """`"Segmentation fault"` -> `"SIGSEGV"`; unknown fatal errors stay `"FatalError"`."""
    for words, name in _SIGNAL_BY_WORDS.items():
        if what.startswith(words):
            return name
    return "FatalError"


def job_timeout_message(match: re.Match[str]) -> str:
    """`"Timeout >1800s"` for a runner's timeout line, like pytest-timeout's own message."""
    minutes = match.group("minutes") or match.group("limit")
    return f"Timeout >{int(minutes) * 60}s" if minutes else "Timeout"


def exit_code_signal(code: int) -> str | None:
    """Exit code 139 -> SIGSEGV (a shell reports death by signal N as 128 + N)."""
    return SIGNALS.get(code - 128) if code > 128 else None


class CrashDump:
    """`Fatal Python error: ...` and faulthandler's per-thread stacks (most recent call first)."""

    MAX_LINES = 300

    def __init__(self, line: str, what: str, context: list[str]) -> None:
        self.what = what.strip()
        self.excerpt = Excerpt(head=50, tail=10)
        for previous in context:
            self.excerpt.add(previous)
        self.excerpt.add(line)
        self.seen = 0
        self.frames = 0
        self.current_thread = False
        self.test_frame: tuple[str, str] | None = None

    def feed(self, line: str) -> bool:
        self.seen += 1
        if self.seen > self.MAX_LINES:
            return False
        if not line.strip():
            return True
        if line.startswith(_THREAD_HEADER):
            self.current_thread = not line.startswith("Thread 0x")
            self.excerpt.add(line)
            return True
        frame = PY_FRAME.match(line)
        if frame:
            self.frames += 1
            self.excerpt.add(line)
            if self.current_thread and self.test_frame is None and frame.group("func").startswith("test"):
                self.test_frame = (frame.group("file"), frame.group("func"))
            return True
        if line[:1] in (" ", "\t") or (self.frames == 0 and self.seen <= 5):
            self.excerpt.add(line)
            return True
        return False


class TimeoutDump:
    """pytest-timeout's `+++ Timeout +++` stacks (most recent call last), or faulthandler's
    `Timeout (0:05:00)!` (most recent call first). The hung test is the innermost test frame."""

    MAX_LINES = 400

    def __init__(self, line: str, *, closing_banner: bool, most_recent_first: bool, seconds: str = "") -> None:
        self.excerpt = Excerpt(head=50, tail=30)
        self.excerpt.add(line)
        self.closing_banner = closing_banner
        self.most_recent_first = most_recent_first
        self.seconds = seconds
        self.seen = 0
        self.test_frame: tuple[str, str] | None = None

    def feed(self, line: str) -> bool:
        self.seen += 1
        if self.seen > self.MAX_LINES:
            return False
        if self.closing_banner and TIMEOUT_BANNER.match(line):
            self.excerpt.add(line)
            self.closing_banner = False  # consume the closing banner, then stop at the next line
            self.seen = self.MAX_LINES
            return True
        frame = PY_FRAME.match(line)
        if frame:
            if frame.group("func").startswith("test") and not (self.most_recent_first and self.test_frame):
                self.test_frame = (frame.group("file"), frame.group("func"))
        elif not self.closing_banner and line[:1] not in (" ", "\t", "") and not line.startswith(_THREAD_HEADER):
            return False  # faulthandler's dump ends at the first line that is not a stack
        self.excerpt.add(line)
        return True

    @property
    def message(self) -> str:
        return f"Timeout >{self.seconds}s" if self.seconds else "Timeout"


class StandaloneTraceback:
    """A Python traceback printed outside any test report (a script that died)."""

    MAX_LINES = 400

    def __init__(self, line: str) -> None:
        self.excerpt = Excerpt()
        self.excerpt.add(line)
        self.tail = TracebackTail()
        self.tail.feed(line)
        self.seen = 0

    def feed(self, line: str) -> bool:
        self.seen += 1
        if self.tail.exception or self.seen > self.MAX_LINES:
            return False  # the exception line ended it; chained tracebacks start a new one
        self.excerpt.add(line)
        self.tail.feed(line)
        return True
