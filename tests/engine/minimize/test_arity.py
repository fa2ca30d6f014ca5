"""`arity`: a call short of an argument, learned from one run's TypeError, is refused unrun."""

from __future__ import annotations

import ast

from app.engine.minimize.arity import lesson, short_of_an_argument
from app.engine.minimize.driver import minimize
from app.engine.minimize.passes import drop_elements

MISSING = 'allclose() missing 1 required positional arguments: "other"'


def test_the_call_the_candidate_shortened_is_the_one_the_message_names():
    current = ast.parse("import torch\nassert torch.allclose(a, b)\nprint(a, b)\n")
    candidate = ast.parse("import torch\nassert torch.allclose(a)\nprint(a, b)\n")
    assert lesson(MISSING, candidate, current) == ("torch.allclose", 2)
    # a method on a value; a constructor's message names `__init__`
    assert lesson("transpose() missing 1 required positional arguments: \"dim1\"",
                  ast.parse("y = x.transpose(1)"), ast.parse("y = x.transpose(1, 2)")) == (".transpose", 2)
    assert lesson("Linear.__init__() missing 1 required positional argument: 'out_features'",
                  ast.parse("from torch import nn\nm = nn.Linear(4)"),
                  ast.parse("from torch import nn\nm = nn.Linear(4, 4)")) == ("nn.Linear", 2)


def test_no_lesson_when_the_message_or_the_shortened_call_is_unclear():
    imports = "import torch\nimport numpy as np\n"
    current = ast.parse(imports + "assert torch.allclose(a, b) and np.allclose(a, b)")
    both = ast.parse(imports + "assert torch.allclose(a) and np.allclose(a)")
    assert lesson(MISSING, both, current) is None  # two callees of that name were shortened
    assert lesson("unsupported operand type(s) for +: 'int' and 'str'", both, current) is None
    assert lesson(MISSING, current, current) is None  # nothing was shortened: not this call's doing
    own = "def allclose(a, b):\n    return a == b\n"
    assert lesson(MISSING, ast.parse(own + "allclose(a)"), ast.parse(own + "allclose(a, b)")) is None


def test_a_call_is_short_only_without_keywords_or_starred_arguments():
    lessons = {"torch.allclose": 2, ".transpose": 2}
    assert short_of_an_argument(ast.parse("import torch\ntorch.allclose(a)"), lessons)
    assert short_of_an_argument(ast.parse("x.transpose(0)"), lessons)
    assert not short_of_an_argument(ast.parse("import torch\ntorch.allclose(a, other=b)"), lessons)
    assert not short_of_an_argument(ast.parse("import torch\ntorch.allclose(*pair)"), lessons)
    assert not short_of_an_argument(ast.parse("import torch, numpy as np\ntorch.allclose(a, b)\nnp.allclose(a)"),
                                    lessons)


class AllcloseOracle:
    """Interesting while `boom()` is called; a shortened `allclose` raises the TypeError."""

    runs_python = False

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.rejected: dict[str, str] = {}

    def __call__(self, sources):
        verdicts = []
        for source in sources:
            self.asked.append(source)
            short = any(isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "allclose" and len(n.args) < 2
                        for n in ast.walk(ast.parse(source)))
            if short:
                self.rejected[source] = MISSING
            verdicts.append("boom()" in source and not short)
        return verdicts

    def rejection(self, source: str) -> str:
        return self.rejected.pop(source, "")


def test_the_gate_refuses_a_shortened_call_a_run_already_rejected():
    source = ("import torch\nfor a, b, c in [(1, 2, 3), (4, 5, 6)]:\n    torch.allclose(a, b)\n"
              "    torch.allclose(b, c)\n    torch.allclose(a, c)\nboom()\n")
    oracle = AllcloseOracle()
    result = minimize(source, oracle, passes=[drop_elements], coarse=())
    shortened = [s for s in oracle.asked if "allclose(a)" in s or "allclose(b)" in s or "allclose()" in s]
    assert result.stats.short > 0
    assert len(shortened) <= 2  # one run taught it (plus a chunk of two, asked in the same sweep)
    # and the result is what it would be without the lessons
    plain = AllcloseOracle()
    plain.rejection = lambda source: ""  # type: ignore[method-assign]
    assert minimize(source, plain, passes=[drop_elements], coarse=()).source == result.source
    assert len(plain.asked) > len(oracle.asked)


def test_what_the_gate_refuses_does_not_depend_on_when_runs_end():
    # jobs=2 and runs ending in a shuffled order: a lesson reaches the gate only once every
    # timing would have judged the run that taught it, so a cap asks the same candidates
    import random
    import threading
    import time

    source = "import torch\n" + "".join(f"torch.allclose(v{i}, v{i + 1})\n" for i in range(12)) + "boom()\n"
    runs = []
    for seed in range(3):
        rng, lock, oracle = random.Random(seed), threading.Lock(), AllcloseOracle()

        def shuffled(sources, rng=rng, lock=lock, oracle=oracle):
            with lock:
                delay = rng.random() * 0.004
                verdicts = oracle(sources)
            time.sleep(delay)
            return verdicts

        shuffled.rejection = oracle.rejection  # type: ignore[attr-defined]
        result = minimize(source, shuffled, passes=[drop_elements], coarse=(), jobs=2, max_candidates=30)
        runs.append((sorted(oracle.asked), result.source, result.stats.short))
    assert runs[0] == runs[1] == runs[2]
    assert runs[0][2] > 0  # the lessons did refuse candidates
