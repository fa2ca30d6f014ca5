"""The test-runner formats: what a failure looks like in pytest, unittest and GoogleTest output.

Pure line-level pieces; `cilogs_job.JobLogParser` drives them as one state machine. Each block
parser keeps bounded buffers only (an `Excerpt`, a few message lines).
"""

from __future__ import annotations

import re

from app.engine.cilogs.model import Excerpt, bound_message

# --- exception lines -------------------------------------------------------------------------

_EXCEPTION_LINE = re.compile(r"^(?P<cls>(?:[A-Za-z_]\w*\.)*[A-Z_]\w*)(?::\s?(?P<msg>.*))?$")
_EXCEPTION_WORDS = ("Error", "Exception", "Exit", "Interrupt", "Warning", "Failed", "Failure", "Timeout", "Fault")


def parse_exception_line(text: str) -> tuple[str, str] | None:
    """`"torch.OutOfMemoryError: CUDA out of memory."` -> ("torch.OutOfMemoryError", "CUDA out...").

    A bare name counts only when it reads like an exception class (`KeyboardInterrupt`).
    """
    match = _EXCEPTION_LINE.match(text.strip())
    if not match:
        return None
    cls, msg = match.group("cls"), match.group("msg")
    if msg is None and not any(word in cls for word in _EXCEPTION_WORDS):
        return None
    if msg is not None and not (any(w in cls for w in _EXCEPTION_WORDS) or "." in cls or cls[0].isupper()):
        return None
    return cls, (msg or "").strip()


_TIMEOUT_MESSAGE = re.compile(r"^Timeout\b")


def classify(exception: str, message: str) -> tuple[str, str]:
    """(kind, exception) for an exception class and its message."""
    short = exception.rsplit(".", 1)[-1]
    if short == "Failed" and _TIMEOUT_MESSAGE.match(message):
        return "timeout", "Timeout"
    if short in ("AssertionError", "AssertionFailure"):
        return "assertion", exception
    return "exception", exception


# --- Python tracebacks -----------------------------------------------------------------------

PY_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line \d+,? in (?P<func>[\w<>.]+)')
_CHAIN_LINES = ("During handling of the above exception", "The above exception was the direct cause")


class TracebackTail:
    """Follows a traceback (possibly chained) and keeps its final exception line(s)."""

    def __init__(self) -> None:
        self.exception = ""
        self.message_lines: list[str] = []
        self.in_frames = False
        self.test_frame: tuple[str, str] | None = None  # (file, function) of the innermost test_*

    def feed(self, line: str) -> None:
        frame = PY_FRAME.match(line)
        if frame:
            self.in_frames = True
            if frame.group("func").startswith("test"):
                self.test_frame = (frame.group("file"), frame.group("func"))
            return
        if line.startswith("Traceback (most recent call last)") or line.startswith(_CHAIN_LINES):
            self.in_frames = True
            return
        if self.in_frames and line[:1] not in (" ", "\t", ""):
            parsed = parse_exception_line(line)
            if parsed:
                self.exception, first = parsed
                self.message_lines = [first] if first else []
                self.in_frames = False
            return
        if self.exception and not self.in_frames and line.strip() and len(self.message_lines) < 12:
            self.message_lines.append(line)

    @property
    def message(self) -> str:
        return bound_message(self.message_lines)


# --- pytest ----------------------------------------------------------------------------------

PYTEST_SECTION = re.compile(r"^={3,} (?P<name>[A-Z][A-Za-z ]*?) ={3,}$")
PYTEST_ANY_SECTION = re.compile(r"^={3,} .*={3,}$")
PYTEST_BLOCK_HEADER = re.compile(r"^_{3,} (?P<name>.+?) _{3,}$")
_NODE_ID = r"(?P<id>[\w./\\-]+\.py(?:::[^\s\[]+(?:\[.*?\])?)*)"
PYTEST_SUMMARY = re.compile(r"^(?P<outcome>FAILED|ERROR) " + _NODE_ID + r"(?: - (?P<msg>.*))?$")
PYTEST_PROGRESS = re.compile(
    r"^(?:\[gw\d+\] \[\s*\d+%\] (?P<o1>FAILED|ERROR) " + _NODE_ID.replace("id>", "id1>")
    + r"|" + _NODE_ID.replace("id>", "id2>") + r" (?P<o2>FAILED|ERROR)\b)"
)
# The parametrization may hold one level of brackets: `test_cat[[1, 2]-float32]`.
PYTEST_TEST_LINE = re.compile(r"(?P<id>[\w./\\-]+\.py::[^\s\[]+(?:\[(?:[^\[\]]|\[[^\[\]]*\])*\])?)(?P<rest>.*)")
PYTEST_RESULT_WORDS = ("PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS", "RERUN")
_TRAILER = re.compile(r"^[^\s:]+:\d+: (?P<cls>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)$")
_ERROR_HEADER = re.compile(r"^ERROR (?:at \w+ of|collecting) (?P<name>.+)$")


def pytest_block_key(test: str) -> str:
    """The name pytest prints over a FAILURES block for a node id.

    `"test/a.py::TestX::test_y[1]"` -> `"TestX.test_y[1]"`; a module id stays the path.
    """
    _, sep, rest = test.partition("::")
    return rest.replace("::", ".") if sep else test


def pytest_header_key(header: str) -> str:
    """`"ERROR at setup of test_x"` -> `"test_x"`; other headers are already keys."""
    match = _ERROR_HEADER.match(header)
    return match.group("name") if match else header


class PytestBlock:
    """One `____ name ____` block of the FAILURES/ERRORS section."""

    def __init__(self, header: str) -> None:
        self.key = pytest_header_key(header)
        self.excerpt = Excerpt()
        self.excerpt.add(f"____ {header} ____")
        self.groups: list[list[str]] = []  # runs of consecutive `E   ` lines
        self.in_group = False
        self.trailer = ""
        self.native = TracebackTail()  # for --tb=native

    def feed(self, line: str) -> None:
        self.excerpt.add(line)
        if line.startswith("E ") or line == "E":
            if not self.in_group:
                self.groups.append([])
                self.in_group = True
            if len(self.groups[-1]) < 12:
                self.groups[-1].append(line[1:].strip())
            return
        self.in_group = False
        trailer = _TRAILER.match(line)
        if trailer:
            self.trailer = trailer.group("cls")
            return
        self.native.feed(line)

    def error(self) -> tuple[str, str, str] | None:
        """(kind, exception, message) of the block's final error, if it shows one."""
        if self.groups:
            lines = self.groups[-1]
            parsed = parse_exception_line(lines[0]) if lines else None
            if parsed and (not self.trailer or parsed[0].endswith(self.trailer.rsplit(".", 1)[-1])):
                exception, message = parsed[0], bound_message([parsed[1], *lines[1:]])
            else:
                exception = self.trailer or ("AssertionError" if lines and lines[0].startswith("assert") else "")
                message = bound_message(lines)
            kind, exception = classify(exception, message)
            return kind, exception, message
        if self.native.exception:
            kind, exception = classify(self.native.exception, self.native.message)
            return kind, exception, self.native.message
        return None


def pytest_summary_error(message: str) -> tuple[str, str, str]:
    """(kind, exception, message) from the text after ` - ` in a short-summary line."""
    parsed = parse_exception_line(message)
    if parsed:
        kind, exception = classify(*parsed)
        return kind, exception, parsed[1]
    if message.startswith("assert"):
        return "assertion", "AssertionError", message
    return "exception", "", message


# --- unittest --------------------------------------------------------------------------------

UNITTEST_HEADER = re.compile(r"^(?P<outcome>FAIL|ERROR): (?P<name>\w+) \((?P<where>[\w.]+)\)(?P<sub>.*)$")
UNITTEST_RULE = re.compile(r"^(?:={20,}|-{20,})$")


def unittest_test_id(name: str, where: str) -> str:
    """`("test_add", "test_math.TestMath.test_add")` (3.11+) or `("test_add", "test_math.TestMath")`."""
    return where if where.endswith("." + name) else f"{where}.{name}"


class UnittestBlock:
    """A `FAIL:`/`ERROR:` block: header, a `----` rule, the traceback, up to the next rule."""

    def __init__(self, outcome: str, test: str, header: str) -> None:
        self.outcome, self.test = outcome, test
        self.excerpt = Excerpt()
        self.excerpt.add(header)
        self.traceback = TracebackTail()
        self.in_body = False

    def feed(self, line: str) -> bool:
        """Take a line; False when the block ended before it (the line is not consumed)."""
        if UNITTEST_RULE.match(line):
            if not self.in_body:
                self.in_body = True
                return True
            return False
        self.excerpt.add(line)
        self.traceback.feed(line)
        return True

    def error(self) -> tuple[str, str, str]:
        exception, message = self.traceback.exception, self.traceback.message
        if not exception:
            exception = "AssertionError" if self.outcome == "FAIL" else ""
        kind, exception = classify(exception, message)
        if self.outcome == "FAIL" and kind == "exception":
            kind = "assertion"  # FAIL: means the test's failureException was raised
        return kind, exception, message


# --- GoogleTest ------------------------------------------------------------------------------

GTEST_FAILED = re.compile(r"^\[  FAILED  \] (?P<id>[\w/]+\.[\w/]+)(?P<rest>.*)$")
GTEST_FAILURE_AT = re.compile(r"^(?:.+:\d+|unknown file): Failure$")
GTEST_MARKER = re.compile(r"^\[ {0,2}[A-Z=-]+ *\]")
GTEST_RUN = b"[ RUN      ] "
GTEST_DONE = (b"[       OK ] ", b"[  FAILED  ] ", b"[  SKIPPED ] ")
_CPP_EXCEPTION = re.compile(r'^C\+\+ exception with description "(?P<msg>.*)" thrown')


class GTestFailure:
    """Lines after `file:line: Failure` up to the next `[ ... ]` marker."""

    def __init__(self, location: str) -> None:
        self.excerpt = Excerpt()
        self.excerpt.add(location)
        self.lines: list[str] = []

    def feed(self, line: str) -> bool:
        if GTEST_MARKER.match(line):
            return False
        self.excerpt.add(line)
        if GTEST_FAILURE_AT.match(line):
            return True
        if line.strip() and len(self.lines) < 12:
            self.lines.append(line.strip())
        return True

    def error(self) -> tuple[str, str, str]:
        cpp = _CPP_EXCEPTION.match(self.lines[0]) if self.lines else None
        if cpp:
            return "exception", "C++ exception", cpp.group("msg")
        return "assertion", "gtest.Failure", bound_message(self.lines)
