"""`session.steady`: a result that fails as expected only on some draws gives way to the last
accepted program that holds."""

from __future__ import annotations

from app.engine.minimize.driver import MinimizeResult
from app.engine.minimize.problem import Stats
from app.engine.minimize.session import STEADY_RUNS, steady
from app.engine.minimize.size import tidy

STEPS = ["a = 1\nb = 2\nc = 3\nboom(a, b, c)\n", "a = 1\nb = 2\nboom(a, b)\n", "a = 1\nboom(a)\n"]


class Draws:
    """An oracle with scripted verdicts per program; one without a script fails as expected
    every time (a steady bug). Has a `deadline`, as SignatureOracle does."""

    def __init__(self, scripts: dict[str, list[bool]]):
        self.scripts = {tidy(k): list(v) for k, v in scripts.items()}
        self.asked: list[str] = []
        self.deadline = 1.0
        self.deadlines_seen: set[float | None] = set()

    def __call__(self, sources):
        self.asked.extend(sources)
        self.deadlines_seen.add(self.deadline)
        return [self.scripts[tidy(s)].pop(0) if self.scripts.get(tidy(s)) else True for s in sources]


def _result() -> MinimizeResult:
    # as the driver leaves it: every accepted program, the original first, the last one current
    return MinimizeResult(original=STEPS[0], source=tidy(STEPS[2]), stats=Stats(), wall_s=0.0, rounds=1,
                          timed_out=False, history=list(STEPS))


def test_a_result_that_holds_is_kept_after_steady_runs_more_verdicts():
    result, oracle = _result(), Draws({})
    assert steady(result, oracle) is result
    assert len(oracle.asked) == STEADY_RUNS
    assert oracle.deadlines_seen == {None} and oracle.deadline == 1.0  # no budget cuts these runs short


def test_a_result_that_fails_as_expected_only_sometimes_gives_way_to_the_last_program_that_holds():
    # the last program failed as expected on the two runs that accepted it, now on one draw of two
    oracle = Draws({STEPS[2]: [True, False]})
    steadied = steady(_result(), oracle)
    assert steadied.source == tidy(STEPS[1]) and steadied.steadied == 1
    # and when nothing holds (the original itself is flaky), the result stays for the cold re-check
    flaky = Draws({s: [False] * STEADY_RUNS for s in STEPS})
    assert steady(_result(), flaky).source == tidy(STEPS[2])


def test_the_program_that_holds_is_found_by_bisecting_not_step_by_step():
    steps = [f"x = {i}\nboom(x)\n" for i in range(40)]  # the flaw came in at step 30 and stayed
    result = MinimizeResult(original=steps[0], source=tidy(steps[-1]), stats=Stats(), wall_s=0.0, rounds=1,
                            timed_out=False, history=list(steps))
    oracle = Draws({s: [False] * 2 * STEADY_RUNS for s in steps[30:]})
    steadied = steady(result, oracle)
    assert steadied.source == tidy(steps[29]) and steadied.steadied == 10
    assert len(set(oracle.asked)) <= 8  # the result, then log2(39) programs
