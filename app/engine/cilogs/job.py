"""One job's log as a streaming state machine: lines in, one draft failure per failing test out.

`JobLogParser` is the `LineSink` of `cilogs_scan.scan`. While idle it sees only trigger lines;
a trigger may open a block (pytest FAILURES section, unittest FAIL/ERROR block, GoogleTest
failure, crash or timeout dump, bare traceback) during which it sees every line. The same
failure reported several times (pytest's progress line, its FAILURES block, its summary line;
GoogleTest's per-test and final lists) merges into one `Draft` keyed by test id.

The test a crash or a timeout happened in is the test the runner last said it started
(`path::test` from pytest -v, `[ RUN      ] Suite.Test`), cross-checked with the dump's stack.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable

from app.engine.cilogs import parsers as fmt
from app.engine.cilogs.dumps import (
    EXIT_CODE,
    FATAL_ERROR,
    FAULTHANDLER_TIMEOUT,
    JOB_TIMEOUT,
    KILL_SIGNALS,
    SHELL_SIGNAL,
    TIMEOUT_BANNER,
    CrashDump,
    StandaloneTraceback,
    TimeoutDump,
    exit_code_signal,
    job_timeout_message,
    signal_name,
)
from app.engine.cilogs.model import Draft
from app.engine.cilogs.scan import clean_line, last_line_with

MAX_FAILURES_PER_JOB = 1000
_CONTEXT_ITEMS = 12
_CONTEXT_TAIL_BYTES = 2048

# How much a source is trusted for the exception and message (the richest report wins).
RANK_PROGRESS, RANK_SUMMARY, RANK_BLOCK = 1, 2, 3


def test_function_name(test_id: str) -> str:
    """`"a.py::TestX::test_y[1]"` -> `"test_y"`; `"Suite.Test"` -> `"Test"`."""
    last = test_id.rsplit("::", 1)[-1] if "::" in test_id else test_id.rsplit(".", 1)[-1]
    return last.split("[", 1)[0]


def frame_is_in_test(test_id: str, frame: tuple[str, str]) -> bool:
    """Whether a stack frame `(file, function)` can be the body of the test `test_id`.

    The function is the test's own, or the template an instantiated test was made from
    (PyTorch's device-type tests: `test_out` runs as `test_out_addmm_cpu_float32`), or the
    frame is in the test's file (a helper the test called).
    """
    name, (path, function) = test_function_name(test_id), frame
    if name == function or name.startswith(function + "_"):
        return True
    test_file = test_id.split("::", 1)[0] if "::" in test_id else ""
    return bool(test_file) and os.path.basename(test_file) == os.path.basename(path)


def _hms_seconds(hms: str) -> str:
    """`"0:30:00"` -> `"1800"` (faulthandler's timeout, as pytest-timeout prints seconds)."""
    hours, minutes, seconds = hms.split(":")
    return f"{int(hours) * 3600 + int(minutes) * 60 + float(seconds):g}"


class JobLogParser:
    """Finds every failing test of one job, once. See the module docstring."""

    def __init__(self, job: str = "", *, bare_traceback_is_failure: bool = False) -> None:
        self.job = job
        self.bare_traceback_is_failure = bare_traceback_is_failure  # plain text logs: no exit code
        self.drafts: dict[str, Draft] = {}
        self.dropped = 0
        self.exit_code: int | None = None
        self._mode: Callable[[str], bool] | None = None
        self._block = None  # the open block of the current mode
        self._pytest_blocks: dict[str, fmt.PytestBlock] = {}
        self._gtest_pending: fmt.GTestFailure | None = None
        self._running: tuple[str, bool] | None = None  # (test id, finished)
        self._recent: deque[str | bytes] = deque(maxlen=_CONTEXT_ITEMS)
        self._signal: str | None = None
        self._last_traceback: StandaloneTraceback | None = None

    # --- LineSink ------------------------------------------------------------------------

    @property
    def wants_every_line(self) -> bool:
        return self._mode is not None

    def skipped(self, buf: bytes, start: int, end: int) -> None:
        tail_start = max(start, end - _CONTEXT_TAIL_BYTES)
        # `_context` drops the first, possibly partial, line of a tail: keep a whole one.
        self._recent.append((b"\n" if tail_start == start else b"") + buf[tail_start:end])
        found = [
            hit
            for hit in (
                last_line_with(buf, b".py::", start, end),
                last_line_with(buf, fmt.GTEST_RUN, start, end),
                last_line_with(buf, fmt.GTEST_DONE[0], start, end),
            )
            if hit
        ]
        if found:
            self._track_running(clean_line(max(found)[1]))

    def line(self, text: str) -> None:
        self._track_running(text)
        self._recent.append(text)
        if self._mode is not None and self._mode(text):
            return
        self._dispatch(text)

    # --- idle: what a trigger line starts ------------------------------------------------

    def _dispatch(self, text: str) -> None:
        if ("FAIL" in text or "ERROR" in text) and self._dispatch_test_report(text):
            return
        if fmt.GTEST_FAILURE_AT.match(text):
            self._open(self._block_line, fmt.GTestFailure(text))
        elif (banner := TIMEOUT_BANNER.search(text)) or (later := FAULTHANDLER_TIMEOUT.search(text)):
            seconds = banner.group("rest").strip(" ()s") if banner else _hms_seconds(later.group("hms"))
            dump = TimeoutDump(text, closing_banner=bool(banner), most_recent_first=not banner, seconds=seconds)
            self._open(self._block_line, dump)
        elif job_timeout := JOB_TIMEOUT.search(text):
            self._job_timeout(job_timeout_message(job_timeout))
        elif fatal := FATAL_ERROR.search(text):
            self._open(self._block_line, CrashDump(text, fatal.group("what"), self._context(3)[:-1]))
        elif exit_code := EXIT_CODE.search(text):
            self.exit_code = int(exit_code.group("code"))
            self._signal = exit_code_signal(self.exit_code) or self._signal
        elif shell_signal := SHELL_SIGNAL.search(text):
            if "Fatal Python error" not in text:
                self._signal = signal_name(shell_signal.group("what"))
        elif "Traceback (most recent call last)" in text:
            self._open(self._block_line, StandaloneTraceback(text))

    def _dispatch_test_report(self, text: str) -> bool:
        if (section := fmt.PYTEST_SECTION.match(text)) and section.group("name") in ("FAILURES", "ERRORS"):
            self._open(self._pytest_line, None)
        elif summary := fmt.PYTEST_SUMMARY.match(text):
            kind, exception, message = fmt.pytest_summary_error(summary.group("msg") or "")
            self._draft(summary.group("id"), kind, exception, message, "pytest", RANK_SUMMARY)
        elif header := fmt.UNITTEST_HEADER.match(text):
            test = fmt.unittest_test_id(header.group("name"), header.group("where"))
            self._open(self._block_line, fmt.UnittestBlock(header.group("outcome"), test, text))
        elif failed := fmt.GTEST_FAILED.match(text):
            pending, self._gtest_pending = self._gtest_pending, None
            if pending is not None:
                self._draft(failed.group("id"), *pending.error(), "gtest", RANK_BLOCK, pending.excerpt.text())
            else:
                self._draft(failed.group("id"), "assertion", "gtest.Failure", "", "gtest", RANK_PROGRESS)
        elif progress := fmt.PYTEST_PROGRESS.match(text):
            test = progress.group("id1") or progress.group("id2")
            self._draft(test, "exception", "", "", "pytest", RANK_PROGRESS, text)
        else:
            return False
        return True

    # --- block modes: True = line consumed, False = block ended before this line ----------

    def _open(self, mode: Callable[[str], bool], block: object) -> None:
        self._mode, self._block = mode, block

    def _close(self) -> None:
        self._mode, self._block = None, None

    def _pytest_line(self, text: str) -> bool:
        if header := fmt.PYTEST_BLOCK_HEADER.match(text):
            self._keep_pytest_block()
            self._block = fmt.PytestBlock(header.group("name"))
            return True
        if fmt.PYTEST_ANY_SECTION.match(text):
            section = fmt.PYTEST_SECTION.match(text)
            if section and section.group("name") in ("FAILURES", "ERRORS"):
                self._keep_pytest_block()
                return True
            self._end_block()
            return False
        if self._block is not None:
            self._block.feed(text)
        return True

    def _keep_pytest_block(self) -> None:
        block, self._block = self._block, None
        if block is not None and len(self._pytest_blocks) < MAX_FAILURES_PER_JOB:
            self._pytest_blocks.setdefault(block.key, block)

    def _block_line(self, text: str) -> bool:
        """Mode of the unittest, GoogleTest, dump and traceback blocks."""
        if self._block.feed(text):
            return True
        self._end_block()
        return False

    def _end_block(self) -> None:
        """Turn the open block into what it reports, and go idle."""
        block = self._block
        if self._mode == self._pytest_line:
            self._keep_pytest_block()
        elif isinstance(block, fmt.UnittestBlock):
            self._draft(block.test, *block.error(), "unittest", RANK_BLOCK, block.excerpt.text())
        elif isinstance(block, fmt.GTestFailure):
            self._gtest_pending = block
        elif isinstance(block, (CrashDump, TimeoutDump)):
            self._finish_dump(block)
        elif isinstance(block, StandaloneTraceback):
            self._last_traceback = block
        self._close()

    def _finish_dump(self, dump: CrashDump | TimeoutDump) -> None:
        test = self._attribute(dump.test_frame)
        if isinstance(dump, CrashDump):
            message = f"Fatal Python error: {dump.what}"
            self._draft(test, "signal", signal_name(dump.what), message, "crash", RANK_BLOCK, dump.excerpt.text())
        else:
            self._draft(test, "timeout", "Timeout", dump.message, "timeout", RANK_PROGRESS, dump.excerpt.text())

    def _job_timeout(self, message: str) -> None:
        """The runner stopped the step or job: the running test timed out, once.

        A test a dump already reported as timed out keeps that report (its stack); with no
        running test, a timeout already found explains the stop and nothing is added.
        """
        test = self._attribute(None)
        if not test and any(d.kind == "timeout" for d in self.drafts.values()):
            return
        self._draft(test, "timeout", "Timeout", message, "timeout", RANK_PROGRESS, "\n".join(self._context(15)))

    # --- bookkeeping ---------------------------------------------------------------------

    def _track_running(self, text: str) -> None:
        if ".py::" in text:
            found = fmt.PYTEST_TEST_LINE.search(text)
            if found:
                finished = any(word in text for word in fmt.PYTEST_RESULT_WORDS)
                self._running = (found.group("id"), finished)
        elif text.startswith("[ RUN      ] "):
            self._running = (text[13:].strip(), False)
        elif text.startswith(("[       OK ] ", "[  FAILED  ] ", "[  SKIPPED ] ")) and self._running:
            self._running = (self._running[0], True)

    def _attribute(self, frame: tuple[str, str] | None) -> str:
        """The test a crash/timeout belongs to: the running test, unless its stack says otherwise."""
        if self._running:
            test, finished = self._running
            if not finished and (frame is None or frame_is_in_test(test, frame)):
                return test  # the runner's node id, parametrization included
            if frame is not None and test_function_name(test) == frame[1]:
                return test
        if frame is not None:
            return f"{os.path.basename(frame[0])}::{frame[1]}"
        return ""

    def _draft(self, test: str, kind: str, exception: str, message: str, source: str, rank: int, excerpt: str = "") -> None:
        draft = self.drafts.get(test)
        if draft is None:
            if len(self.drafts) >= MAX_FAILURES_PER_JOB:
                self.dropped += 1
                return
            draft = self.drafts[test] = Draft(test)
        draft.merge(kind, exception, message, source=source, rank=rank, excerpt=excerpt)

    def _context(self, lines: int) -> list[str]:
        out: list[str] = []
        for item in self._recent:
            if isinstance(item, bytes):
                out.extend(clean_line(raw) for raw in item.split(b"\n")[1:] if raw)
            else:
                out.append(item)
        return out[-lines:]

    def finish(self) -> list[Draft]:
        """Close what is open, merge the pytest blocks, add crash and exit-code failures."""
        if self._mode is not None:
            self._end_block()
        self._keep_pytest_block()
        for draft in self.drafts.values():
            block = self._pytest_blocks.pop(fmt.pytest_block_key(draft.test), None)
            if block is not None:
                self._merge_pytest_block(draft, block)
        for key, block in self._pytest_blocks.items():
            self._draft(key, "", "", "", "pytest", 0)
            self._merge_pytest_block(self.drafts[key], block)
        self._add_unexplained_failure()
        return list(self.drafts.values())

    def _merge_pytest_block(self, draft: Draft, block: fmt.PytestBlock) -> None:
        error = block.error() or ("exception", "", "")
        draft.merge(*error, source="pytest", rank=RANK_BLOCK, excerpt=block.excerpt.text())

    def _add_unexplained_failure(self) -> None:
        """A death by signal is its own failure; a bare exit code only when nothing else explains it."""
        context = "\n".join(self._context(15))
        kinds = {d.kind for d in self.drafts.values()}
        if self._signal in KILL_SIGNALS and "timeout" in kinds:
            return  # the timeout's enforcer killed it: the timeout is the failure
        if self._signal and "signal" not in kinds:
            test = self._attribute(None)
            detail = f"exit code {self.exit_code}" if self.exit_code else "reported by the shell"
            self._draft(test, "signal", self._signal, f"killed by {self._signal} ({detail})", "crash", RANK_BLOCK, context)
            return
        if self.drafts:
            return
        failed = self.exit_code not in (None, 0) or self.bare_traceback_is_failure
        traceback = self._last_traceback
        if failed and traceback is not None and traceback.tail.exception:
            kind, exception = fmt.classify(traceback.tail.exception, traceback.tail.message)
            test = self._attribute(traceback.tail.test_frame) if traceback.tail.test_frame else ""
            self._draft(test, kind, exception, traceback.tail.message, "traceback", RANK_BLOCK, traceback.excerpt.text())
        elif self.exit_code not in (None, 0):
            message = f"Process completed with exit code {self.exit_code}"
            self._draft("", "exit", "ExitCode", message, "exit", RANK_BLOCK, context)
