"""`seeds`: a seeded repro stays seeded while it shrinks; the seed goes at the end only for an
exception that holds without it."""

from __future__ import annotations

import ast

from app.engine.minimize.driver import MinimizeResult, minimize
from app.engine.minimize.oracle import FailureSignature
from app.engine.minimize.passes import delete_statements
from app.engine.minimize.problem import ReductionProblem, Stats, batch
from app.engine.minimize.seeds import seed_statements, seeds, without_seeds
from app.engine.minimize.session import unseeded
from app.engine.minimize.size import tidy

SEEDED = "import torch\ntorch.manual_seed(0)\nx = torch.randn(4) * 400\nboom(x)\n"


def test_seeding_calls_are_found_and_removed_where_they_stand():
    assert seeds(ast.parse("torch.cuda.manual_seed_all(1)")) and seeds(ast.parse("np.random.seed(3)"))
    assert not seeds(ast.parse("torch.randn(2)\nseed = 4"))
    # only where it can run: a seeding function nobody calls any more seeds nothing
    helper = "def seed_everything(s):\n    torch.manual_seed(s)\n"
    assert not seeds(ast.parse(helper + "x = 1")) and seeds(ast.parse(helper + "seed_everything(3)"))
    assert [ast.unparse(s) for s in seed_statements(ast.parse(helper + "torch.manual_seed(7)"))] == [
        "torch.manual_seed(7)"]  # the outermost, once
    assert [ast.unparse(s) for s in seed_statements(ast.parse(helper + "np.random.seed(1)"))] == [
        "np.random.seed(1)", "torch.manual_seed(0)"]  # a literal seed, to stand at module level
    assert without_seeds("def main():\n    torch.manual_seed(0)\nmain()\n") == "def main():\n    pass\nmain()\n"
    assert without_seeds(SEEDED) == "import torch\nx = torch.randn(4) * 400\nboom(x)\n"
    assert without_seeds("g = torch.manual_seed(0)\n") is None  # not a statement of its own


def test_the_gate_keeps_the_last_seed_of_a_seeded_program():
    kept = minimize(SEEDED, batch(lambda s: "boom(x)" in s), passes=[delete_statements], coarse=(), keep_seed=True)
    assert "torch.manual_seed(0)" in kept.source and kept.stats.unseeded > 0
    dropped = minimize(SEEDED, batch(lambda s: "boom(x)" in s), passes=[delete_statements], coarse=())
    assert "manual_seed" not in dropped.source
    # a program with two seeds may lose one of them
    problem = ReductionProblem("torch.manual_seed(0)\ntorch.manual_seed(1)\nboom()\n", batch(lambda s: "boom" in s),
                               keep_seed=True)
    assert problem.consider("torch.manual_seed(1)\nboom()\n") and not problem.consider("boom()\n")


def _result(source: str) -> MinimizeResult:
    return MinimizeResult(original=source, source=source, stats=Stats(), wall_s=0.0, rounds=1, timed_out=False,
                          history=[source])


def test_the_seed_goes_at_the_end_only_for_an_exception_that_holds_without_it():
    exception = FailureSignature("exception", "IndexError", "index out of range in self")
    check = FailureSignature("exception", "AssertionError", "", operations=(frozenset({"rsqrt"}),))
    steady = batch(lambda s: "boom" in s)
    assert unseeded(_result(SEEDED), exception, steady).source == tidy(without_seeds(SEEDED))
    assert unseeded(_result(SEEDED), check, steady).source == SEEDED  # the values are the draws'
    draws = iter([True] * 3 + [False] * 10)  # without the seed it fails on some draws only
    assert unseeded(_result(SEEDED), exception, batch(lambda s: next(draws))).source == SEEDED
