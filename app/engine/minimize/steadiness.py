"""Programs accepted on lucky draws: found after every round, not only at the end.

A candidate is accepted on two runs. One that fails as expected on some random draws only
(`x.pow(2)` shrunk to `x.pow(1)` under an `rsqrt`: NaN, another failure, when the random mean
is negative) passes both about a quarter of the time, and every later program inherits the
flaw. Checked only at the end, such a flaw cost the whole minimization after it: on
layernorm_module_allclose the result stepped back 37 accepted programs, to 434 tokens against
79 when no flaw got in.

So after each round the driver asks `holds` (more verdicts, no budget cutting them short) of
the current program; if it does not hold, the accepted programs since the last one that held are
bisected for the latest that does (the flaw, once in, stays in every later program), the problem
steps back to it, and the programs after it are cached as uninteresting: the pass that offered
the flaw meets it in the cache, and the minimization goes on from there.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

log = logging.getLogger(__name__)
Holds = Callable[[str], bool]


def latest_holding(programs: Sequence[str], holds: Holds) -> int:
    """The index of the latest program that holds, or -1, assuming that once one does not
    hold no later one does: a bisection, about log2(len) checks, not one per program."""
    good, bad = -1, len(programs)
    while bad - good > 1:
        middle = (good + bad) // 2
        good, bad = (middle, bad) if holds(programs[middle]) else (good, middle)
    return good


class Checkpoints:
    """Between rounds: keep the current program only if it holds (see the module's docstring).

    `problem` is a `ReductionProblem` (its `history`, `source` and `step_back`). The original is
    checked only when a later program does not hold: if it does not hold either, the repro is
    flaky by itself, nothing can be told apart, and the checks stop (the cold re-check reports).
    """

    def __init__(self, holds: Holds | None) -> None:
        self.holds = holds
        self.held = 0  # index in the history of the latest program known to hold (the original)
        self.original_checked = False
        self.stepped_back = 0  # accepted programs dropped, in all

    def after_round(self, problem) -> bool:
        """Check the current program; True if the problem stepped back (there is work again)."""
        history = problem.history
        last = len(history) - 1
        if self.holds is None or last <= self.held:
            return False
        if self.holds(problem.source):
            self.held = last
            return False
        if not self.original_checked and self.held == 0:
            self.original_checked = True
            if not self.holds(history[0]):
                self.holds = None  # a flaky original: nothing to tell apart
                return False
        keep = self.held + 1 + latest_holding(history[self.held + 1:last], self.holds)
        log.warning("an accepted program failed as expected only sometimes: stepping back %d program(s)",
                    last - keep)
        self.stepped_back += last - keep
        problem.step_back(keep)
        self.held = keep
        return True
