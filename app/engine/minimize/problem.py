"""The reduction problem: the current program and the one gate every candidate goes through.

`consider()` is modelled on Hypothesis' shrinker: parse, canonicalize (`ast.unparse`), look the
canonical text up in a cache of everything already judged, reject anything not strictly smaller
than the current program, and only then ask the oracle. The oracle is a batch function
`evaluate(sources) -> [bool]` so a caller can hand it several independent candidates at once
(the sandbox runs them in parallel); a plain predicate is wrapped by `batch()`.
"""

from __future__ import annotations

import ast
import re
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from app.engine.minimize.arity import Lessons, learn, lesson, short_of_an_argument
from app.engine.minimize.parsing import parse
from app.engine.minimize.seeds import seeds
from app.engine.minimize.size import Size, size_key
from app.engine.minimize.unbound import Known, bound_names, filter_applies

Evaluate = Callable[[Sequence[str]], list[bool]]
Predicate = Callable[[str], bool]
_PASS_LINE = re.compile(r"^\s*pass$", re.MULTILINE)


def batch(predicate: Predicate) -> Evaluate:
    """A batch oracle that asks `predicate` about each source in turn."""
    return lambda sources: [bool(predicate(s)) for s in sources]


class CouldNotMinimize(ValueError):
    """The oracle rejects the original program itself (after canonicalization)."""


# The largest program the minimizer takes. Passes are near-linear, but every candidate is
# unparsed, tokenized, probed and analysed whole: ~0.4 s a candidate at 5,000 lines (0.1 MB)
# on a loaded 2-core machine, ~2 s at this size: the budget, checked between candidates,
# holds within a few seconds. A repro past it is a whole project pasted in, or generated.
MAX_SOURCE_BYTES = 500_000


class TooLarge(CouldNotMinimize):
    """The program is over `MAX_SOURCE_BYTES`: refused before anything runs."""


def check_size(source: str, limit: int = MAX_SOURCE_BYTES) -> None:
    """Raise `TooLarge` (one sentence, with the figures) if `source` is over `limit` bytes."""
    size = len(source.encode("utf-8", "replace"))
    if size > limit:
        lines = source.count("\n") + 1
        raise TooLarge(f"the program is {size / 1e6:.1f} MB ({lines:,} lines); the minimizer takes "
                       f"programs up to {limit / 1e6:.1f} MB: cut it down to the part that fails first")


@dataclass
class Stats:
    candidates: int = 0  # sources the oracle judged
    accepted: int = 0  # of those, the ones that became the current program
    cache_hits: int = 0  # candidates answered from the cache (or rejected as not smaller)
    invalid: int = 0  # candidates that did not compile
    unbound: int = 0  # candidates refused unrun: they read a name (or `self.X`) they no longer bind (`unbound`)
    short: int = 0  # candidates refused unrun: a call short of an argument a run said it needs (`arity`)
    unseeded: int = 0  # candidates refused unrun: they drop the program's last seeding call (`seeds`)


@dataclass
class ReductionProblem:
    """The current best program, its size, a verdict cache and counters."""

    source: str
    evaluate: Evaluate
    deadline: float | None = None  # time.monotonic() after which no oracle call is made
    max_candidates: int | None = None  # oracle verdicts after which no more are asked for
    on_progress: Callable[[ReductionProblem], None] | None = None  # after every verdict batch
    stats: Stats = field(default_factory=Stats)
    clock: Callable[[], float] = time.monotonic  # what `deadline` is measured on
    keep_seed: bool = False  # a seeded program stays seeded (`seeds`)

    def __post_init__(self) -> None:
        check_size(self.source)
        canonical = canonicalize(self.source)
        if canonical is None:
            raise CouldNotMinimize("the program does not parse")
        self._cache: dict[str, bool] = {}
        self.lessons: Lessons = {}  # what calls need (`arity`): the gate refuses calls short of it
        self._lessons_of: dict[str, tuple[str, int]] = {}  # rejected candidate -> its lesson, not applied yet
        self.history: list[str] = []  # every program that was current, the original first
        if not self._judge([canonical])[0]:
            raise CouldNotMinimize(
                "the oracle rejects the program after `ast.unparse`; nothing can be minimized"
            )
        self._set_current(canonical)

    # -- the gate ---------------------------------------------------------------------------

    @property
    def out_of_time(self) -> bool:
        return self.deadline is not None and self.clock() >= self.deadline

    @property
    def out_of_budget(self) -> bool:
        """Past the deadline, or `max_candidates` verdicts given (a budget that, unlike time,
        does not depend on how loaded the machine is)."""
        return not self.may_ask(in_flight=0)

    def may_ask(self, in_flight: int) -> bool:
        """Whether one more candidate fits the budget, with `in_flight` already being judged."""
        if self.max_candidates is not None and self.stats.candidates + in_flight >= self.max_candidates:
            return False
        return not self.out_of_time

    def fresh(self, candidate: str | ast.Module) -> str | None:
        """The canonical text of `candidate` if it is worth asking the oracle about, else None."""
        text = canonicalize(candidate)
        if text is None:
            self.stats.invalid += 1
            return None
        if text in self._cache or size_key(text) >= self.size:
            self.stats.cache_hits += 1
            return None
        tree = candidate if isinstance(candidate, ast.Module) else None
        if self._known is not None and self._known.refuses(tree := tree or parse(text)):
            self._cache[text] = False  # known: a NameError, not the failure (not an oracle verdict)
            self.stats.unbound += 1
            return None
        if self.lessons and short_of_an_argument(tree := tree or parse(text), self.lessons):
            self._cache[text] = False  # known: a TypeError, not the failure
            self.stats.short += 1
            return None
        if self._seeded and not seeds(tree or parse(text)):
            self._cache[text] = False  # not asked: the seed stays
            self.stats.unseeded += 1
            return None
        return text

    def apply_lessons(self, texts: Sequence[str] | None = None) -> None:
        """Let the gate use what the rejected runs of `texts` (None: all so far) taught (`arity`).

        The driver says when: between sweeps, and within one for the candidates every timing
        would have judged by then, so what the gate refuses, and so what a cap allows, does not
        depend on how fast the runs were."""
        for text in list(self._lessons_of) if texts is None else texts:
            learn(self.lessons, self._lessons_of.pop(text, None))

    def judge(self, candidates: Sequence[str]) -> list[bool]:
        """Oracle verdicts for canonical, fresh candidates (one batch; cached; no acceptance)."""
        allowed = [c for place, c in enumerate(candidates) if self.may_ask(in_flight=place)]  # a prefix
        verdicts = self._judge(allowed) if allowed else []
        return verdicts + [False] * (len(candidates) - len(allowed))

    def ask(self, text: str) -> bool:
        """The oracle's verdict on one fresh candidate, without recording it: safe to call from
        worker threads (the driver keeps `jobs` in flight); `record` it on the driver's thread."""
        return False if self.out_of_budget else bool(self.evaluate([text])[0])

    def record(self, text: str, verdict: bool) -> None:
        """Cache and count a verdict (one obtained with `ask`, or by `judge`)."""
        self._cache[text] = verdict
        self.stats.candidates += 1
        rejection = getattr(self.evaluate, "rejection", None)
        if not verdict and rejection is not None and hasattr(self, "tree"):
            message = rejection(text)
            learned = lesson(message, text, self.tree) if message else None
            if learned is not None:
                self._lessons_of[text] = learned
        if self.on_progress is not None and hasattr(self, "size"):  # (not for the original)
            self.on_progress(self)

    def consider(self, candidate: str | ast.Module) -> bool:
        """Gate one candidate; if the oracle likes it, it becomes the current program."""
        text = self.fresh(candidate)
        if text is None or not self.judge([text])[0]:
            return False
        self.accept(text)
        return True

    @property
    def failing_lines(self) -> tuple[int, ...]:
        """Lines of the current program on its failing stack, if the oracle reports them."""
        report = getattr(self.evaluate, "failure_lines", None)
        return tuple(report(self.source)) if report is not None else ()

    @property
    def failing_message(self) -> str:
        """The first line of the current program's failure message, if the oracle reports it."""
        report = getattr(self.evaluate, "failure_message", None)
        return report(self.source) if report is not None else ""

    def accept(self, text: str) -> None:
        """Make an already-judged, interesting, smaller candidate the current program."""
        assert self._cache.get(text) is True, "accept() only takes candidates the oracle liked"
        if size_key(text) < self.size:
            self.stats.accepted += 1
            self._set_current(text)

    def step_back(self, keep: int) -> None:
        """Make `history[keep]` current again; the programs accepted after it are cached as
        uninteresting (they failed as expected only sometimes: `steadiness`)."""
        dropped = self.history[keep + 1:]
        for text in dropped:
            self._cache[text] = False
        kept = self.history[keep]
        del self.history[keep:]
        self._set_current(kept)

    # -- internals --------------------------------------------------------------------------

    def _judge(self, candidates: Sequence[str]) -> list[bool]:
        verdicts = [bool(v) for v in self.evaluate(list(candidates))]
        for text, verdict in zip(candidates, verdicts):
            self.record(text, verdict)
        return verdicts

    def _set_current(self, text: str) -> None:
        self.history.append(text)
        self.source = text
        self.tree = parse(text)
        self.size: Size = size_key(text, self.tree)
        self._seeded = self.keep_seed and seeds(self.tree)
        bound = bound_names(self.tree) if getattr(self.evaluate, "runs_python", False) else None
        self._known = Known.of(self.tree, bound) if bound is not None and filter_applies(bound, self.failing_message) else None
        if self.on_progress is not None:
            self.on_progress(self)


def canonicalize(candidate: str | ast.Module) -> str | None:
    """`ast.unparse` of the candidate minus `pass` beside other statements (a passes' leftover
    that means nothing), or None if it does not parse or compile. A given tree is not changed
    (candidate trees share subtrees with the current program's)."""
    try:
        tree = parse(candidate) if isinstance(candidate, str) else candidate
        text = ast.unparse(tree) + "\n"
        if _PASS_LINE.search(text):
            tree = parse(text)  # our own copy, to edit
            _drop_redundant_pass(tree)
            text = ast.unparse(tree) + "\n"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. "'int' object is not callable" SyntaxWarnings
            compile(text, "<candidate>", "exec")
    except (SyntaxError, ValueError, TypeError, AttributeError, RecursionError):
        return None
    return text


def _drop_redundant_pass(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and len(body) > 1 and any(isinstance(s, ast.Pass) for s in body):
                body[:] = [s for s in body if not isinstance(s, ast.Pass)] or [ast.Pass()]
