"""The real oracle: a candidate is interesting only if it fails exactly as the original did.

"Exactly" is the seed's rule: the same exception class and the same distinctive message
(numbers masked, so `(32x128 and 64x10)` still matches after literals shrink), or the same
fatal signal, or a timeout. A candidate raising anything else is rejected, however close its
text: that is what keeps the minimizer from drifting to a different bug.

A messageless `AssertionError` carries no message to compare, so it must also fail on a line
calling the same library functions (`torch.allclose`). And whenever a failure stops at a check
(`checks.check_operands`: an `assert`, `assert_close(...)`, `if ...: raise`), message or not,
the candidate must keep the bug, not only the exception (`keeps_the_bug`):

- each side of the comparison keeps an operation it computed in the original (its own side;
  sides may swap): `assert torch.allclose(torch.randn([]), torch.ones(1))` keeps the check but
  not the bug, and is rejected;
- the data-path steps to the failure (masks, indexing, narrowing casts) stay, and a mask or
  cast still feeds an operation it fed (`masked_fill` -> `softmax`);
- values the message prints keep their meaning (`checks.value_meanings`): a mismatch count
  stays non-zero, a NaN stays a NaN.

Tracebacks are read by `app.engine.verdict.signature` (the reproduce engine's parser: class, message,
Dynamo wrappers unwrapped, frames); this module only reduces its answer to what must stay the
same. The oracle needs `run(source, timeout_s) -> result` where `result` has `exit_code`,
`signal`, `timed_out` and `output` (head/tail bytes), i.e. `app.engine.sandbox.runner.Sandbox.run`
or a fork server's equivalent; candidates of one batch run concurrently on `jobs` threads.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import permutations
from typing import Any, Literal

from app.engine.minimize.checks import (
    CHECK_OPERATIONS,
    Pair,
    computing,
    keeps_pairs,
    value_meanings,
)
from app.engine.minimize.coverage import read_dead
from app.engine.minimize.crashes import MEMORY, crash_family
from app.engine.minimize.dataflow import Operations, check_dataflow, operation_key
from app.engine.minimize.probe import probed, read_probe
from app.engine.minimize.sites import failing_site, site_operations
from app.engine.verdict.normalize import normalize_text
from app.engine.verdict.signature import mask_digits, parse_traceback, traceback_frames

Run = Callable[[str, float], Any]
_TRACEBACK = "Traceback (most recent call last):"
_CALLED = re.compile(r"([A-Za-z_][\w.]*)\s*\(")
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
    # What each operand of the failing check depends on (None: unknown / not a check).
    operations: Operations | None = None
    path: frozenset[str] = frozenset()  # masks, indexing, casts on the way to the check
    values: frozenset[str] = frozenset()  # what the message's printed values mean
    consumers: frozenset[tuple[str, str]] = frozenset()  # (mask or cast, what takes its result)
    pairs: frozenset[Pair] = frozenset()  # (library op, the primitives its hand-written side used)
    raiser: str = ""  # the library function the error left (`sites.raiser`), "" if the program's
    site_ops: frozenset[str] = frozenset()  # what the program's failing line calls (not at a check)
    finite: tuple[str, ...] | None = None  # per operand of the failing check: `probe`'s words

    def may_match(self, other: FailureSignature | None) -> bool:
        """The part of `matches` that needs no analysis of the candidate's source: the same kind,
        and for an exception the same class and message (a run failing otherwise is rejected
        whatever its fingerprint, so the fingerprint need not be computed)."""
        if other is None or other.kind != self.kind:
            return False
        if self.kind != "exception":
            return True
        same_message = self.message in other.message if self.partial else other.message == self.message
        return other.exc_type == self.exc_type and same_message

    def matches(self, other: FailureSignature | None) -> bool:
        """Does `other` (a candidate's failure) reproduce this one?"""
        if other is None or not self.may_match(other):
            return False
        if self.kind == "exception":
            return self.site <= other.site and self.fails_at_the_same_operation(other) and self.keeps_the_bug(other)
        return self.kind == "timeout" or other.code == self.code or (self.message == other.message == MEMORY)

    def fails_at_the_same_operation(self, other: FailureSignature) -> bool:
        """Raised from the same library function, or, when the program's own line raised, on a
        line calling one of the same operations (`sites`). A user's `--expect` names no place."""
        if self.partial:
            return True
        if other.raiser != self.raiser:
            return False
        return not self.site_ops or bool(self.site_ops & other.site_ops)

    def keeps_the_bug(self, other: FailureSignature) -> bool:
        """The same computation compared, on the same data path, with printed values meaning
        the same (a user's `--expect` gives only a message: no values to keep), and a
        hand-written operation still compared with the library's, whole (`checks.keeps_pairs`)."""
        return (self.tests_the_same_computation(other) and self.feeds_the_same_operations(other)
                and keeps_pairs(self.pairs, other.operations or ()) and self.as_finite(other)
                and (self.partial or other.values == self.values))

    def as_finite(self, other: FailureSignature) -> bool:
        """As many of the compared values are NaN or infinite, or None, or all zeros, as in the original
        (`probe`): finite sides that now differ because one is NaN are another failure, and so
        is a NaN gradient check that now reads a `.grad` that is None. Unknown (a run without
        the probe) says nothing."""
        if self.finite is None or other.finite is None:
            return True
        return all(self.finite.count(word) == other.finite.count(word) for word in ("nonfinite", "none", "zero"))

    def feeds_the_same_operations(self, other: FailureSignature) -> bool:
        """A mask or cast the candidate kept still feeds one of the operations it fed in the
        original: `masked_fill` then `softmax` (0/0 on a fully masked row), not `masked_fill`
        then a product with `-inf`."""
        for step in self.path & other.path:
            mine = {op for fed, op in self.consumers if fed == step}
            if mine and not mine & {op for fed, op in other.consumers if fed == step}:
                return False
        return True

    def tests_the_same_computation(self, other: FailureSignature) -> bool:
        """Each side of the check still computes part of what it did in the original, on the
        same data path.

        Some order of the candidate's operands (sides may swap) has, for every operand of the
        original that computed something (`checks.computing`: not the check itself, not
        plumbing), one of the operations that set it apart from the other operands. Every
        data-path step of the original (`path`: masks, computed indexes, narrowing casts) is
        still on the candidate's path. Vacuous when the original's operands are unknown or
        only constructors (then there is no computation to lose). See `dataflow`, `checks`.
        """
        mine = _distinct([computing(ops) for ops in self.operations or ()])
        if not any(mine) and not self.path:
            return True
        if other.operations is None or len(other.operations) < len(mine) or not self.path <= other.path:
            return False
        orders = permutations(range(len(other.operations)), len(mine)) if len(mine) <= 4 else [range(len(mine))]
        return any(all(not side or side & other.operations[j] for side, j in zip(mine, order))
                   for order in orders)

    def describe(self) -> str:
        if self.kind == "exception":
            return f"{self.exc_type}: {self.message}" if self.message else self.exc_type
        if self.kind == "timeout":
            return "timeout"
        return f"{self.kind} {self.code}"


def signature_of(result: Any, source: str | None = None) -> FailureSignature | None:
    """The failure signature of a finished run of `source`, or None if it succeeded.

    Without `source` a failing assert's operations stay unknown, and such a signature does not
    match an original whose operations are known.
    """
    if result.timed_out:
        return FailureSignature("timeout")
    text = (result.output.head + result.output.tail).decode("utf-8", "replace")
    exception = failure_from_output(text, source)
    if exception is not None:
        return exception
    if result.signal:
        return FailureSignature("signal", code=result.signal, message=crash_family(result.signal, text))
    if result.exit_code:
        return FailureSignature("exit", code=result.exit_code)
    return None


def _distinct(sides: list[frozenset[str]]) -> list[frozenset[str]]:
    """Each side's operations that the other sides do not compute too (the shared model, the
    input's projection tell no side apart); a side with nothing of its own keeps them all."""
    if len(sides) < 2:
        return sides
    shared = frozenset.intersection(*sides)
    return [side - shared or side for side in sides]


def failure_from_output(text: str, source: str | None = None) -> FailureSignature | None:
    """The exception signature of the last traceback in `text` (None if it shows none)."""
    parsed = parse_traceback(text) if _TRACEBACK in text else None
    if parsed is None or parsed.kind != "exception":
        return None
    message = mask_digits(normalize_text(parsed.message))
    frames = traceback_frames(text)
    site = frozenset(_library_calls(frames[-1].code)) if frames and not message else frozenset()
    own = [frame for frame in frames if _is_repro(frame.path)]
    flow = check_dataflow(source, own[-1].line, read_dead(text)) if source is not None and own else None
    raised_by, blamed = failing_site(text, REPRO_FILE)
    site_ops = site_operations(source, blamed) if source is not None and blamed and flow is None else frozenset()
    return FailureSignature("exception", parsed.exception, message, site,
                            operations=flow.operations if flow else None,
                            path=flow.path if flow else frozenset(),
                            consumers=flow.consumers if flow else frozenset(),
                            values=value_meanings(_message_block(text)),
                            pairs=flow.pairs if flow else frozenset(),
                            raiser=raised_by, site_ops=site_ops, finite=read_probe(text) if flow else None)


def _message_block(text: str) -> str:
    """The last traceback's exception header and what follows it (assert_close's report)."""
    lines = text[text.rfind(_TRACEBACK):].splitlines()[1:]
    start = next((i for i, line in enumerate(lines) if line and not line[0].isspace()), len(lines))
    return "\n".join(lines[start:start + 40])


def failing_lines(text: str, filename: str = REPRO_FILE) -> tuple[int, ...]:
    """Line numbers of the program's own frames in the last traceback, outermost first; the
    line a Dynamo error names in its message ("from user code:") is the innermost."""
    lines = tuple(frame.line for frame in traceback_frames(text) if _is_repro(frame.path, filename))
    _, blamed = failing_site(text, filename)
    return lines + (blamed,) if blamed is not None and (not lines or lines[-1] != blamed) else lines


def _is_repro(path: str, filename: str = REPRO_FILE) -> bool:
    return path.rsplit("/", 1)[-1] == filename


def _library_calls(code: str) -> list[str]:
    """The checks a line calls (`torch.allclose` -> `allclose`, `self.assertEqual`).

    Only checks: what the compared sides compute is the fingerprint's business
    (`keeps_the_bug`), and a side's operations may move off the line (`out = f(x)`).
    Bare names (`f(x)`) are left out: the minimizer may inline or rename user functions.
    """
    names = [name.rsplit(".", 1)[1] for name in _CALLED.findall(code) if "." in name]
    return [name for name in names if operation_key(name) in CHECK_OPERATIONS or name.lower().startswith("assert")]


# A candidate may run SLOW_FACTOR times as long as the latest interesting run (at least
# SLOW_FLOOR_S) before it is stopped, and so rejected: see `candidate_timeout_s`.
SLOW_FACTOR = 4.0
SLOW_FLOOR_S = 3.0
DEADLINE_GRACE_S = 0.5  # the least a candidate started before the deadline may run


class SignatureOracle:
    """A batch oracle: which sources fail with `expected`? Runs a batch on `jobs` threads."""

    # It runs each source as a Python program: the gate may refuse, unrun, a candidate that reads
    # a name it no longer binds (a NameError, not `expected`; see `unbound`).
    runs_python = True

    def __init__(self, run: Run, expected: FailureSignature, *, timeout_s: float, jobs: int = 1,
                 clock: Callable[[], float] = time.monotonic, deadline: float | None = None, confirm: bool = False):
        self.run = run
        self.confirm = confirm  # an interesting candidate runs once more: see `__call__`
        self.deadline = deadline  # on `clock`: no candidate runs past it (the original may)
        self.expected = expected
        self.timeout_s = timeout_s
        self.jobs = max(1, jobs)
        self.clock = clock
        self._pool = ThreadPoolExecutor(self.jobs) if self.jobs > 1 else None
        self._lines: dict[str, tuple[int, ...]] = {}
        self._messages: dict[str, str] = {}
        self._rejections: dict[str, str] = {}  # a TypeError's first line, for `arity`
        self._latest: float | None = None  # seconds, of the latest run that failed as expected

    def candidate_timeout_s(self) -> float:
        """How long a candidate may run before it is stopped (and so rejected).

        The full timeout until something has failed as expected (the original is judged
        first), and always when the failure to keep is a timeout. Otherwise a few times the
        latest interesting run (close to the current program, which only gets smaller and
        faster): a candidate that stopped failing often runs much longer
        (`fullgraph=True` dropped, the whole generation loop runs) and waiting for it only
        confirms a rejection. Cutting it short can only reject, never accept: no drift.
        Nor does a candidate run past the `deadline` (the minimization's budget), but the
        original's check, which runs first, always gets the full timeout.
        """
        if self.expected.kind == "timeout" or self._latest is None:
            return self.timeout_s
        limit = min(self.timeout_s, max(SLOW_FLOOR_S, SLOW_FACTOR * self._latest))
        if self.deadline is not None:  # the budget holds: a candidate still running at its end
            limit = min(limit, max(DEADLINE_GRACE_S, self.deadline - self.clock()))  # only loses
        return limit

    def signature(self, source: str) -> FailureSignature | None:
        started = self.clock()
        result = self.run(probed(source), self.candidate_timeout_s())
        elapsed = self.clock() - started
        signature = signature_of(result)  # cheap: the class and message, no analysis of the source
        if self.expected.may_match(signature):  # only then the fingerprint (dataflow, sites): most runs fail otherwise
            signature = signature_of(result, source)
        if self.expected.matches(signature):
            text = (result.output.head + result.output.tail).decode("utf-8", "replace")
            self._lines[source] = failing_lines(text)
            parsed = parse_traceback(text)
            self._messages[source] = parsed.message if parsed is not None else ""
            self._latest = elapsed
        elif signature is not None and signature.exc_type == "TypeError":
            parsed = parse_traceback((result.output.head + result.output.tail).decode("utf-8", "replace"))
            self._rejections[source] = parsed.message if parsed is not None else ""
        return signature

    def failure_lines(self, source: str) -> tuple[int, ...]:
        """Where an interesting `source` failed: its own frames' lines, outermost first."""
        return self._lines.get(source, ())

    def failure_message(self, source: str) -> str:
        """The first line of the message an interesting `source` failed with, as printed."""
        return self._messages.get(source, "")

    def rejection(self, source: str) -> str:
        """The first line of the TypeError a rejected `source` raised ("" if none; asked once)."""
        return self._rejections.pop(source, "")

    def __call__(self, sources: Sequence[str]) -> list[bool]:
        """Which `sources` fail as expected. With `confirm`, one that did must do so again on a
        second run: a candidate draws its tensors afresh on every run (the fork server reseeds
        each child), and one that fails only on some draws (`rsqrt` of a random value that is
        negative half the time) would be accepted on a lucky draw and then fail to reproduce
        cold; twice, the chance of keeping it is squared. Not for timeouts (two full waits)."""
        verdicts = [self.expected.matches(s) for s in self._signatures(sources)]
        if self.confirm and self.expected.kind != "timeout":
            again = [i for i, ok in enumerate(verdicts) if ok]
            for i, signature in zip(again, self._signatures([sources[i] for i in again])):
                verdicts[i] = self.expected.matches(signature)
        return verdicts

    def _signatures(self, sources: Sequence[str]) -> list[FailureSignature | None]:
        if self._pool is None or len(sources) <= 1:
            return [self.signature(s) for s in sources]
        return list(self._pool.map(self.signature, sources))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
