"""`steadiness`: a program accepted on lucky draws is stepped back from after the round, and the
minimization goes on from the latest program that holds."""

from __future__ import annotations

from collections import Counter

from app.engine.minimize.driver import minimize
from app.engine.minimize.passes import delete_statements
from app.engine.minimize.problem import ReductionProblem, batch
from app.engine.minimize.steadiness import Checkpoints, latest_holding

SOURCE = "a = 1\nx = 2\nb = 3\nc = 4\nboom(x)\n"


class LuckyDraws:
    """Fails as expected (True) while `boom` is called; without `x = 2` the failure shows on
    the first two draws of each program only (accepted, then not again): a flaw."""

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()

    def __call__(self, source: str) -> bool:
        self.asked[source] += 1
        if "boom" not in source:
            return False
        return "x = 2" in source or self.asked[source] <= 2

    def holds(self, source: str) -> bool:
        return all(self(source) for _ in range(2))


def test_a_flaw_accepted_on_lucky_draws_is_stepped_back_from_and_the_rest_still_shrinks():
    oracle = LuckyDraws()
    result = minimize(SOURCE, batch(oracle), passes=[delete_statements], coarse=(), holds=oracle.holds)
    assert result.source == "x = 2\nboom(x)\n"  # the flaw is out, and a, b, c went all the same
    assert result.stepped_back >= 1
    assert oracle.holds(result.source)


def test_without_checks_the_flaw_stays_in_the_result():
    # what the checks are for: the same run without them ends on a program that does not hold
    oracle = LuckyDraws()
    result = minimize(SOURCE, batch(oracle), passes=[delete_statements], coarse=())
    assert "x = 2" not in result.source and not oracle.holds(result.source)


def test_a_repro_that_is_flaky_by_itself_is_left_alone():
    problem = ReductionProblem(SOURCE, batch(lambda s: "boom" in s))
    problem.consider("x = 2\nboom(x)\n")
    asked: list[str] = []

    def never(text: str) -> bool:  # nothing holds, the original neither
        asked.append(text)
        return False

    checkpoints = Checkpoints(never)
    assert checkpoints.after_round(problem) is False
    assert problem.source == "x = 2\nboom(x)\n" and asked[-1] == problem.history[0]
    assert checkpoints.after_round(problem) is False and len(asked) == 2  # no more checks


def test_stepping_back_caches_the_dropped_programs_as_uninteresting():
    problem = ReductionProblem(SOURCE, batch(lambda s: "boom" in s))
    assert problem.consider("a = 1\nx = 2\nboom(x)\n") and problem.consider("x = 2\nboom(x)\n")
    problem.step_back(1)
    assert problem.source == "a = 1\nx = 2\nboom(x)\n" and len(problem.history) == 2
    assert problem.fresh("x = 2\nboom(x)\n") is None  # known: not asked again


def test_latest_holding_bisects():
    programs = [str(i) for i in range(20)]
    checked: list[str] = []

    def holds(text: str) -> bool:
        checked.append(text)
        return int(text) < 13

    assert latest_holding(programs, holds) == 12 and len(checked) <= 5
    assert latest_holding(programs, lambda _: False) == -1
