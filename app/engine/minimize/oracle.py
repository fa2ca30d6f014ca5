"""The real oracle: a candidate is interesting only if it fails exactly as the original did.

"Exactly" is the seed's rule: the same exception class and the same distinctive message
(numbers masked, so `(32x128 and 64x10)` still matches after literals shrink), or the same
fatal signal, or a timeout. A messageless `AssertionError` must also fail on a line calling
the same functions (`torch.allclose`), so deleting the computation cannot turn it into some
other assertion. A candidate raising anything else is rejected, however close its text:
that is what keeps the minimizer from drifting to a different bug.

The oracle only needs `run(source, timeout_s) -> result` where `result` has `exit_code`,
`signal`, `timed_out` and `output` (head/tail bytes), i.e. `app.engine.sandbox.Sandbox.run`
or a fork server's equivalent; candidates of one batch run concurrently on `jobs` threads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

from app.engine.normalize import normalize_text

Run = Callable[[str, float], Any]
_TRACEBACK = "Traceback (most recent call last):"
_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*)(?::\s?(.*))?$")
_CALLED = re.compile(r"([A-Za-z_][\w.]*)\s*\(")
_DIGITS = re.compile(r"\d+")
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)', re.MULTILINE)
REPRO_FILE = "repro.py"  # the name the sandbox and the fork server give the program


@dataclass(frozen=True)
class FailureSignature:
    """How a run failed, reduced to what must stay the same while minimizing."""

    kind: Literal["exception", "signal", "timeout", "exit"]
    exc_type: str = ""
    message: str = ""  # first line; volatile parts and every digit run masked
    site: frozenset[str] = frozenset()  # library calls on the failing line (messageless only)
    code: int | None = None  # signal number or exit code
    partial: bool = False  # `message` need only occur in the candidate's (a user's `--expect`)

    def matches(self, other: FailureSignature | None) -> bool:
        """Does `other` (a candidate's failure) reproduce this one?"""
        if other is None or other.kind != self.kind:
            return False
        if self.kind == "exception":
            same_message = self.message in other.message if self.partial else other.message == self.message
            return other.exc_type == self.exc_type and same_message and self.site <= other.site
        return self.kind == "timeout" or other.code == self.code

    def describe(self) -> str:
        if self.kind == "exception":
            return f"{self.exc_type}: {self.message}" if self.message else self.exc_type
        if self.kind == "timeout":
            return "timeout"
        return f"{self.kind} {self.code}"


def signature_of(result: Any) -> FailureSignature | None:
    """The failure signature of a finished run, or None if it succeeded."""
    if result.timed_out:
        return FailureSignature("timeout")
    text = (result.output.head + result.output.tail).decode("utf-8", "replace")
    exception = parse_traceback(text)
    if exception is not None:
        return exception
    if result.signal:
        return FailureSignature("signal", code=result.signal)
    if result.exit_code:
        return FailureSignature("exit", code=result.exit_code)
    return None


def parse_traceback(text: str) -> FailureSignature | None:
    """The exception class, masked message and failing line of the last traceback in `text`."""
    start = text.rfind(_TRACEBACK)
    if start < 0:
        return None
    lines = text[start:].splitlines()[1:]
    last_code = ""
    for i, line in enumerate(lines):
        if line.startswith((" ", "\t")) or not line.strip():
            if line.startswith("    ") and not line.lstrip().startswith(("File ", "^", "~")):
                last_code = line.strip()
            continue
        match = _EXCEPTION_LINE.match(line)
        if match is None:
            continue
        exc_type, message = match.group(1), _DIGITS.sub("<n>", normalize_text(match.group(2) or ""))
        site = frozenset(_library_calls(last_code)) if not message else frozenset()
        return FailureSignature("exception", exc_type, message, site)
    return None


def failing_lines(text: str, filename: str = REPRO_FILE) -> tuple[int, ...]:
    """Line numbers of the program's own frames in the last traceback, outermost first."""
    start = text.rfind(_TRACEBACK)
    if start < 0:
        return ()
    frames = _FRAME.findall(text[start:])
    return tuple(int(line) for path, line in frames if path.rsplit("/", 1)[-1] == filename)


def _library_calls(code: str) -> list[str]:
    """Methods and library functions called on a line (`torch.allclose` -> `allclose`).

    Bare names (`f(x)`) are left out: the minimizer may inline or rename user functions.
    """
    return [name.rsplit(".", 1)[1] for name in _CALLED.findall(code) if "." in name]


class SignatureOracle:
    """A batch oracle: which sources fail with `expected`? Runs a batch on `jobs` threads."""

    def __init__(self, run: Run, expected: FailureSignature, *, timeout_s: float, jobs: int = 1):
        self.run = run
        self.expected = expected
        self.timeout_s = timeout_s
        self.jobs = max(1, jobs)
        self._pool = ThreadPoolExecutor(self.jobs) if self.jobs > 1 else None
        self._lines: dict[str, tuple[int, ...]] = {}

    def signature(self, source: str) -> FailureSignature | None:
        result = self.run(source, self.timeout_s)
        signature = signature_of(result)
        if self.expected.matches(signature):
            text = (result.output.head + result.output.tail).decode("utf-8", "replace")
            self._lines[source] = failing_lines(text)
        return signature

    def failure_lines(self, source: str) -> tuple[int, ...]:
        """Where an interesting `source` failed: its own frames' lines, outermost first."""
        return self._lines.get(source, ())

    def __call__(self, sources: Sequence[str]) -> list[bool]:
        if self._pool is None or len(sources) == 1:
            signatures = [self.signature(s) for s in sources]
        else:
            signatures = list(self._pool.map(self.signature, sources))
        return [self.expected.matches(s) for s in signatures]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
