"""The gate refuses, unrun, a candidate that reads a name it no longer binds (`unbound`)."""

from __future__ import annotations

import ast

from app.engine.minimize import ReductionProblem, minimize
from app.engine.minimize.passes import delete_statements
from app.engine.minimize.unbound import (
    assigned_attributes,
    bound_names,
    filter_applies,
    newly_unassigned,
    newly_unbound,
    newly_unresolved,
    scan,
    unresolved_names,
)

PROGRAM = """\
import re
import torch
SPECIALS = ['[CLS]']
def words(text):
    return re.findall('[a-z]+', text)
ids = [len(SPECIALS) + len(w) for w in words('a long review')]
table = torch.nn.Embedding(2, 1)
table(torch.tensor(ids))
"""


class RunsPython:
    """A stand-in for the sandbox oracle: 'fails as reported' while the embedding call stays and
    every name it reads is bound (what running it would say), counting what it is asked."""

    runs_python = True

    def __init__(self, message: str = "index out of range in self"):
        self.asked: list[str] = []
        self.message = message

    def __call__(self, sources):
        self.asked.extend(sources)
        return [self._fails_as_reported(s) for s in sources]

    def failure_message(self, source: str) -> str:
        return self.message

    @staticmethod
    def _fails_as_reported(source: str) -> bool:
        tree = ast.parse(source)
        bound = bound_names(tree) or set()
        read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        return "table(" in source and read <= bound | {"len", "print"}


def test_bound_names_sees_every_kind_of_binding():
    tree = ast.parse(
        "import a.b as c, d.e\nfrom f import g\nx, (y, *z) = 1, (2, 3)\nfor i in r: pass\n"
        "def h(p, *q, k=1, **kw):\n    global G\n    nonlocal_ = [j for j in p]\n"
        "class K: pass\ntry: pass\nexcept E as err: pass\nwith w as v: pass\n(n := 1)\ndel old\n"
        "match m:\n    case [first, *rest]: pass\n    case {'k': val, **others}: pass\n"
    )
    assert bound_names(tree) >= {"c", "d", "g", "x", "y", "z", "i", "h", "p", "q", "k", "kw", "G", "nonlocal_",
                                 "j", "K", "err", "v", "n", "old", "first", "rest", "val", "others"}


def test_a_program_that_can_bind_names_dynamically_is_never_filtered():
    for source in ("from torch import *\n", "globals()['x'] = 1\n", "exec('x = 1')\n", "m.__dict__['x'] = 1\n",
                   "vars()['x'] = 1\n", "setattr(module, 'x', 1)\n", "sys.modules[__name__].x = 1\n"):
        assert bound_names(ast.parse(source)) is None
        assert not filter_applies(bound_names(ast.parse(source)), "")


def test_methods_named_like_dynamic_builtins_bind_nothing():
    source = "model.eval()\nd = vars(args)\nfor m in model.modules(): pass\nsetattr(self, 'w', 1)\n"
    assert bound_names(ast.parse(source)) == {"d", "m"}


def test_only_names_the_current_program_bound_count():
    current = bound_names(ast.parse("x = 1\nprint(x, y)\n"))
    assert newly_unbound(current, ast.parse("print(x, y)\n")) == {"x"}  # `y`, `print`: not ours to judge
    assert newly_unbound(current, ast.parse("print(y)\n")) == set()
    assert newly_unbound(current, ast.parse("def f(x):\n    return x\nprint(y)\n")) == set()  # still bound


def test_a_failure_about_an_unbound_name_turns_the_filter_off():
    assert filter_applies(set(), "index out of range in self")
    assert not filter_applies(set(), "name 'model' is not defined")
    assert not filter_applies(set(), "cannot access local variable 'x' where it is not associated with a value")


def test_the_gate_refuses_a_candidate_that_unbinds_a_name_without_asking_the_oracle():
    oracle = RunsPython()
    problem = ReductionProblem(PROGRAM, oracle)
    asked = len(oracle.asked)
    without_import = PROGRAM.replace("import re\n", "")
    assert problem.fresh(without_import) is None
    assert problem.consider(without_import) is False
    assert len(oracle.asked) == asked and problem.stats.unbound == 1  # refused once, then from the cache
    assert problem.consider(PROGRAM.replace("SPECIALS = ['[CLS]']\n", "SPECIALS = []\n")) is True  # still bound


def test_an_oracle_that_does_not_run_python_is_asked_about_everything():
    asked: list[str] = []
    problem = ReductionProblem(PROGRAM, lambda sources: asked.extend(sources) or [True] * len(sources))
    assert problem.consider(PROGRAM.replace("import re\n", "")) is True
    assert problem.stats.unbound == 0 and len(asked) == 2


def test_a_program_failing_on_an_unbound_name_keeps_every_candidate_asked():
    oracle = RunsPython(message="name 'ids' is not defined")
    problem = ReductionProblem(PROGRAM, oracle)
    problem.fresh(PROGRAM.replace("import re\n", ""))
    assert problem.stats.unbound == 0


def test_ddmin_asks_fewer_candidates_for_the_same_result():
    filtered = RunsPython()
    result = minimize(PROGRAM, filtered, passes=[delete_statements])
    unfiltered = RunsPython()
    unfiltered.runs_python = False
    baseline = minimize(PROGRAM, unfiltered, passes=[delete_statements])
    assert result.source == baseline.source
    assert result.stats.unbound > 0
    assert result.stats.candidates == baseline.stats.candidates - result.stats.unbound


def test_unresolved_names_follow_python_scopes():
    source = ("import torch\ndef check(dim, b):\n    xs = [i for i in range(dim)]\n    return lambda q: q + b + xs[0]\n"
              "class A:\n    def f(self):\n        global G\n        G = 2\n        return self\n"
              "print(G, len([]), __name__)\ntry:\n    pass\nexcept Exception as e:\n    print(e)\n"
              "results = check(dim, other)\n")
    assert unresolved_names(ast.parse(source)) == {"dim", "other"}  # `dim`: only check's parameter
    assert unresolved_names(ast.parse("exec('dim = 1')\nprint(dim)\n")) is None  # dynamic: unknown
    assert newly_unresolved(frozenset({"other"}), scan(ast.parse("print(other)\n"))) == set()  # already so


def test_the_gate_refuses_a_read_that_only_another_scope_binds():
    # ddmin deletes the loop that bound `dim` at module level; `def check(dim)` still has a
    # parameter of that name, so the scope-blind check lets it through: a NameError, run for nothing
    head = "table = len\ndef check(dim):\n    return [dim]\n"
    program = head + "for dim in [1, 2]:\n    table(check(dim))\n"
    oracle = RunsPython()
    problem = ReductionProblem(program, oracle)
    asked = len(oracle.asked)
    assert problem.fresh(head + "table(check(dim))\n") is None
    assert problem.fresh(head + "dim = 1\ntable(check(dim))\n") is not None
    assert len(oracle.asked) == asked and problem.stats.unbound == 1


LAYER = """\
class Pool(nn.Module):
    def __init__(self):
        super().__init__()
        self.value = nn.Linear(2, 2)
        self.key = nn.Linear(2, 2)
    def forward(self, x):
        return self.key(x) + self.value(x)
class Head(nn.Linear):
    def forward(self, x):
        return x @ self.weight
"""


def unassigned(current, source: str) -> set[str]:
    tree = ast.parse(source)
    return newly_unassigned(current, scan(tree), bound_names(tree))


def test_a_self_attribute_read_after_its_assignment_went_is_known_to_fail():
    current = assigned_attributes(ast.parse(LAYER))
    assert ("Pool", "value") in current and ("Head", "weight") not in current
    assert unassigned(current, LAYER.replace("        self.value = nn.Linear(2, 2)\n", "")) == {"value"}
    # still settable: another `obj.value = ...`, a method or class attribute of that name, a string
    for kept in ("Pool.value = 1\n", "def value():\n    pass\n", "register('value')\n"):
        candidate = LAYER.replace("        self.value = nn.Linear(2, 2)\n", "") + kept
        assert unassigned(current, candidate) == set(), kept
    # a library base's attribute read by a subclass that never set it is not in question
    assert unassigned(current, LAYER.replace("self.key = nn.Linear(2, 2)", "pass")) == {"key"}
    assert unassigned(current, LAYER.replace("x @ self.weight", "x @ self.weight.T")) == set()
    assert not filter_applies(set(), "'Pool' object has no attribute 'value'")
