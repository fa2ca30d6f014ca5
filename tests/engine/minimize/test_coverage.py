"""The fingerprint counts only what the failing run executed: a conditional's side that never
ran (`coverage`) computes nothing the check compares."""

from __future__ import annotations

import ast
import subprocess
import sys

from app.engine.minimize.coverage import EVENT_CAP, MARK, conditionals, prune, read_dead
from app.engine.minimize.dataflow import check_dataflow
from app.engine.minimize.oracle import failure_from_output
from app.engine.minimize.probe import probed, unprobed

# The live side of the conditional computes the value; the dead side holds the "bug" (`exp`).
ORIGINAL = ("import math\ndef norm(v, bias):\n    return math.exp(v) + bias if bias is not None else math.exp(v)\n"
            "assert norm(1.0, 0.5) == 1.0, 'norm'\n")
# What the benchmark's layer norm became: the bias returned, the normalisation in the side that never runs.
DEAD_BUG = ORIGINAL.replace("math.exp(v) + bias if", "bias if")
IF_STATEMENT = "import math\nx = 2.0\nif x < 0:\n    x = math.exp(x)\nassert x == 1.0, 'x'\n"


def _text(source: str, folder) -> str:
    (folder / "repro.py").write_text(probed(source))
    done = subprocess.run([sys.executable, "repro.py"], check=False, cwd=folder, capture_output=True, timeout=120)
    return (done.stdout + done.stderr).decode()


def test_a_bug_operation_left_only_in_a_side_that_never_ran_is_not_kept(tmp_path):
    original = failure_from_output(_text(ORIGINAL, tmp_path), ORIGINAL)
    assert original.operations == (frozenset({"exp"}), frozenset())
    text = _text(DEAD_BUG, tmp_path)
    assert f"{MARK} 3:11:orelse" in text and read_dead(text) == {(3, 11, "orelse")}
    candidate = failure_from_output(text, DEAD_BUG)
    assert candidate.operations == (frozenset(), frozenset())
    assert not original.matches(candidate)
    # read statically (no trace), the dead side's `exp` fooled the fingerprint
    assert original.matches(failure_from_output(text.replace(MARK, "[other]"), DEAD_BUG))


def test_an_if_whose_body_never_ran_computes_nothing(tmp_path):
    text = _text(IF_STATEMENT, tmp_path)
    assert read_dead(text) == {(3, 0, "body")}
    assert check_dataflow(IF_STATEMENT, 5).operations == (frozenset({"exp"}), frozenset())
    assert check_dataflow(IF_STATEMENT, 5, read_dead(text)).operations == (frozenset(), frozenset())


def test_sides_that_ran_stay_and_the_program_fails_the_same(tmp_path):
    both = IF_STATEMENT.replace("x = 2.0\n", "for x in (-1.0, 2.0):\n    pass\n").replace("if x < 0:", "if x < 0 or x > 0:")
    text = _text(both, tmp_path)
    assert MARK not in text  # the body ran: nothing is dead
    assert text.rstrip().endswith("AssertionError: x")
    assert probed(DEAD_BUG).count("\n") == DEAD_BUG.count("\n") and unprobed(probed(DEAD_BUG)) == DEAD_BUG


def test_a_program_that_runs_past_the_event_cap_reports_nothing(tmp_path):
    loop = f"for i in range({EVENT_CAP}):\n    pass\n"
    text = _text(IF_STATEMENT.replace("x = 2.0\n", "x = 2.0\n" + loop), tmp_path)
    assert MARK not in text and read_dead(text) == frozenset()
    assert text.rstrip().endswith("AssertionError: x")


def test_compiled_or_self_tracing_programs_are_not_traced():
    for program in ("import torch\nf = torch.compile(abs)\ny = 1 if f else 2\n",
                    "import torch\n@torch.jit.script\ndef f(x):\n    return x if x > 0 else -x\n",
                    "import sys\nsys.settrace(None)\ny = 1 if sys else 2\n"):
        assert conditionals(ast.parse(program)) == {}
    assert list(conditionals(ast.parse("y = 1 if z else 2\n"))) == [(1, 4)]


def test_prune_keeps_every_other_node_where_it_was():
    tree = prune(ast.parse(IF_STATEMENT), frozenset({(3, 0, "body")}))
    assert ast.unparse(tree).splitlines()[2:4] == ["if x < 0:", "    pass"]
    assert [n.lineno for n in tree.body] == [1, 2, 3, 5]
    assert read_dead("[scrub-dead] 3:0:body\nTraceback (most recent call last):\n") == {(3, 0, "body")}
    assert read_dead("no probe here") == frozenset()
