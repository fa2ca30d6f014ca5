"""The driver: passes to a fixpoint, best-yielding first, candidates judged in parallel batches.

One *round* runs every pass once. A pass sweeps its candidates in order with `jobs` of them in
flight (independent: all derive from the same current program); a slot is refilled as soon as
its candidate ends, and the next candidate is built while the other slots run. When several in
flight succeed, their edits are merged and the merge is verified before it is accepted
(independent simplifications can interact); if it fails, the smallest single winner is taken.
After an acceptance the pass regenerates its candidates for the new program and resumes where
it was.

Big cuts come first: one round of the coarse passes alone (`COARSE_PASSES`: whole definitions,
layers, classes, statement blocks, wrappers), then the fine ones (literals, arguments,
sub-expressions, control flow) join: a fine pass sweeps every expression of the program, so it
is cheapest on an already small one. (Running the coarse passes to their own fixpoint first
was measured too: their later rounds cost ~10 s on compile_graph_break for 4 lines.)

Passes are reordered after each round by the tokens they removed per candidate they asked
about (Hypothesis' `fixate_shrink_passes` idea, made cost-aware: a pass that removes 90 tokens
in 9 candidates goes before one removing 250 in 190), ties (passes that never removed
anything) kept in the seed's order. Calls, not seconds: the order must not depend on load.
Minimization stops when two consecutive rounds make no progress (the seed's rule; the program is
then at a fixpoint, so the "~20 lines" target is reported, not enforced) or when the time
budget runs out.
"""

from __future__ import annotations

import ast
import logging
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import (
    FIRST_COMPLETED,
    Executor,
    Future,
    ThreadPoolExecutor,
    wait,
)
from dataclasses import dataclass, field

from app.engine.minimize.edits import Edit, NodeIndex, apply_edits, mergeable
from app.engine.minimize.parsing import parse
from app.engine.minimize.passes import COARSE_PASSES, PASSES, Pass
from app.engine.minimize.problem import (
    Evaluate,
    Predicate,
    ReductionProblem,
    Stats,
    batch,
)
from app.engine.minimize.size import code_lines, size_key, tidy
from app.engine.minimize.steadiness import Checkpoints, Holds

log = logging.getLogger(__name__)
TARGET_LINES = 20
COARSE_ROUNDS = 1


@dataclass(frozen=True)
class Progress:
    candidates: int
    accepted: int
    tokens: int
    lines: int
    pass_name: str


@dataclass
class MinimizeResult:
    original: str
    source: str  # tidied
    stats: Stats
    wall_s: float
    rounds: int
    timed_out: bool
    gains: dict[str, int] = field(default_factory=dict)  # tokens removed, per pass
    costs: dict[str, int] = field(default_factory=dict)  # oracle calls, per pass
    seconds: dict[str, float] = field(default_factory=dict)  # wall time, per pass
    history: list[str] = field(default_factory=list)  # every accepted program (canonical), oldest first
    steadied: int = 0  # steps back to a program that failed as expected every time (`session.steady`)
    stepped_back: int = 0  # accepted programs dropped between rounds, as failing only sometimes (`steadiness`)

    @property
    def original_lines(self) -> int:
        return code_lines(self.original)

    @property
    def final_lines(self) -> int:
        return code_lines(self.source)


def minimize(
    source: str,
    evaluate: Evaluate,
    *,
    jobs: int = 1,
    budget_s: float | None = None,
    max_candidates: int | None = None,
    passes: Sequence[Pass] = PASSES,
    patience: int = 2,
    progress: Callable[[Progress], None] | None = None,
    coarse: Collection[Pass] = COARSE_PASSES,
    clock: Callable[[], float] = time.monotonic,
    holds: Holds | None = None,
    keep_seed: bool = False,
) -> MinimizeResult:
    """Shrink `source` while `evaluate` keeps saying yes. Raises `CouldNotMinimize` up front.

    `coarse` passes (those of `passes` among them) first run alone for `COARSE_ROUNDS` round(s);
    then every pass runs, to the fixpoint rule. `budget_s` is measured on `clock` (a test's
    fake clock); it is checked before every candidate is built, not only before it is run.
    `holds(text)`, if given, is asked of the current program after each round: one accepted on
    lucky draws is stepped back from (`steadiness.Checkpoints`). With `keep_seed` a seeded
    program stays seeded (`seeds`).
    """
    started = clock()
    deadline = started + budget_s if budget_s is not None else None
    current_pass = ["start"]

    def report(problem: ReductionProblem) -> None:
        if progress is not None:
            progress(Progress(problem.stats.candidates, problem.stats.accepted, problem.size.tokens,
                              code_lines(problem.source), current_pass[0]))

    problem = ReductionProblem(source, evaluate, deadline=deadline, max_candidates=max_candidates,
                              on_progress=report, clock=clock, keep_seed=keep_seed)
    pool = ThreadPoolExecutor(jobs, thread_name_prefix="minimize") if jobs > 1 else None
    gains = {p.__name__: 0 for p in passes}
    costs = {p.__name__: 0 for p in passes}
    seconds = {p.__name__: 0.0 for p in passes}
    order = list(passes)
    rounds = idle_rounds = 0
    checkpoints = Checkpoints(holds)

    def run_round(round_passes: list[Pass]) -> bool:
        before = problem.size
        for pass_ in round_passes:
            current_pass[0] = pass_.__name__
            tokens, calls, began = problem.size.tokens, problem.stats.candidates, clock()
            run_pass(problem, pass_, jobs, pool)
            gains[pass_.__name__] += tokens - problem.size.tokens
            costs[pass_.__name__] += problem.stats.candidates - calls
            seconds[pass_.__name__] += clock() - began
            if problem.out_of_budget:
                break
        order.sort(key=lambda p: -yield_rate(gains[p.__name__], costs[p.__name__]))  # stable
        progressed = problem.size != before
        return (not problem.out_of_budget and checkpoints.after_round(problem)) or progressed

    try:
        # Big cuts first: the coarse passes alone, so the fine ones sweep a small program.
        for _ in range(COARSE_ROUNDS):
            rounds += 1
            if problem.out_of_budget or not run_round([p for p in order if p in coarse]):
                break
        while idle_rounds < patience and not problem.out_of_budget:
            rounds += 1
            idle_rounds = 0 if run_round(order) else idle_rounds + 1
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    return MinimizeResult(
        original=source,
        source=tidy(problem.source),
        stats=problem.stats,
        wall_s=clock() - started,
        rounds=rounds,
        timed_out=problem.out_of_time,
        gains=gains,
        costs=costs,
        seconds=seconds,
        history=problem.history,
        stepped_back=checkpoints.stepped_back,
    )


def yield_rate(gain: int, cost: float) -> float:
    """Tokens removed per oracle call (a pass that removed nothing: 0, whatever it cost).

    Counted in calls, not seconds: the order passes run in, and so the candidates a cap
    allows, must not depend on how loaded the machine is.
    """
    return gain / max(cost, 1e-3) if gain > 0 else 0.0


def shrink(source: str, predicate: Predicate, passes: Sequence[Pass] = PASSES, jobs: int = 1) -> str:
    """Minimize with a plain predicate; the canonical (unparsed, untidied) result, for tests."""
    result = minimize(source, batch(predicate), passes=passes, jobs=jobs)
    return ast.unparse(parse(result.source))


def run_pass(problem: ReductionProblem, pass_: Pass, jobs: int, pool: Executor | None = None) -> bool:
    """Sweep one pass over the current program; True if it changed anything."""
    progressed = False
    position = 0
    while not problem.out_of_budget:
        problem.apply_lessons()
        tree = problem.tree
        index = NodeIndex(tree, problem.failing_lines, problem.failing_message)
        winner_at = _sweep(problem, tree, index, _numbered(pass_(tree, index), position), jobs, pool)
        if winner_at is None:
            return progressed
        progressed, position = True, max(0, winner_at - 1)  # its predecessor may have shifted into place
    return progressed


@dataclass(frozen=True)
class _Candidate:
    position: int  # in the pass's order, to resume from after an acceptance
    edits: list[Edit]
    text: str  # canonical


def _numbered(groups: Iterator[list[Edit]], start: int) -> Iterator[tuple[int, list[Edit]]]:
    """The pass's candidates from `start` on. A pass that raises ends its sweep (logged): one
    pass's bug on an odd program must not lose the whole minimization."""
    position = 0
    while True:
        try:
            group = next(groups)
        except StopIteration:
            return
        except Exception:
            log.exception("a minimizer pass failed on this program; its sweep ends here")
            return
        if position >= start:
            yield position, group
        position += 1


def _sweep(problem: ReductionProblem, tree: ast.Module, index: NodeIndex,
           groups: Iterator[tuple[int, list[Edit]]], jobs: int, pool: Executor | None) -> int | None:
    """Judge fresh candidates with `jobs` in flight, in the pass's order; accept the first winner.

    The outcome and the candidates asked do not depend on timing: candidate `k` is submitted
    only once every candidate before `k - jobs + 1` is judged uninteresting (a sliding window
    of `jobs`), so the candidates asked are exactly those up to the first winner's window,
    however fast each one ran. The first winner in the pass's order is the one taken, merged
    with the winners among the `jobs - 1` candidates after it. Every candidate asked is
    recorded (cached and counted), so a candidate cap stops at exactly the same place under
    any load. Returns the position of the first winner, or None when the candidates ran out.
    """
    fresh = _fresh_candidates(problem, tree, index, groups)
    order: list[tuple[_Candidate, Future]] = []  # submitted, in the pass's order
    verdicts: dict[int, bool] = {}  # by place in `order`
    losers = 0  # order[:losers] are judged and uninteresting; order[losers], if True, is the winner
    exhausted = False
    taught = 0  # order[:taught]'s rejected runs taught the gate (`arity`)
    while True:
        while (len(order) < losers + jobs and not exhausted
               and problem.may_ask(in_flight=len(order) - len(verdicts))):
            judged_on_any_timing = max(0, len(order) - jobs + 1)  # candidate k is built once those are losers
            problem.apply_lessons([c.text for c, _ in order[taught:judged_on_any_timing]])
            taught = max(taught, judged_on_any_timing)
            candidate = next(fresh, None)
            if candidate is None:
                exhausted = True
            else:
                order.append((candidate, _submit(pool, problem.ask, candidate.text)))
        for place, (candidate, future) in enumerate(order):
            if place not in verdicts and future.done():
                verdicts[place] = future.result()
                problem.record(candidate.text, verdicts[place])
        while verdicts.get(losers) is False:
            losers += 1
        running = [f for _, f in order if not f.done()]
        if verdicts.get(losers):
            window = range(losers, min(losers + jobs, len(order)))
            if all(place in verdicts for place in window) and (
                    len(order) >= losers + jobs or exhausted or problem.out_of_budget):
                winners = [order[place][0] for place in window if verdicts[place]]
                _accept(problem, tree, index, winners)
                return winners[0].position
        elif not running and (exhausted or problem.out_of_budget):
            return None  # every candidate judged uninteresting, or no more may be asked
        if running:
            wait(running, return_when=FIRST_COMPLETED)


def _fresh_candidates(problem: ReductionProblem, tree: ast.Module, index: NodeIndex,
                      groups: Iterator[tuple[int, list[Edit]]]) -> Iterator[_Candidate]:
    seen: set[str] = set()
    for position, group in groups:
        if problem.out_of_time:  # building candidates costs time too: a pass whose candidates
            return  # the gate refuses (not smaller, seen) must not run past the budget
        text = problem.fresh(apply_edits(tree, group, index))
        if text is not None and text not in seen:
            seen.add(text)
            yield _Candidate(position, group, text)


def _submit(pool: Executor | None, function: Callable[[str], bool], text: str) -> Future:
    if pool is not None:
        return pool.submit(function, text)
    future: Future = Future()  # one job: judged right here, in order
    future.set_result(function(text))
    return future


def _accept(problem: ReductionProblem, tree: ast.Module, index: NodeIndex, winners: list[_Candidate]) -> None:
    if len(winners) > 1:
        merged = mergeable(index, [c.edits for c in winners])
        text = problem.fresh(apply_edits(tree, merged, index)) if merged is not None else None
        if text is not None and problem.judge([text])[0]:
            problem.accept(text)
            return
    problem.accept(min((c.text for c in winners), key=size_key))
