"""Untrusted words in generated comments and docstrings never become code."""

from __future__ import annotations

import ast

import pytest

from app.engine.testgen.device_test import FuzzTestSpec, fuzz_test
from app.engine.testgen.repro_test import node_repro_test
from app.engine.testgen.stress import stress_test
from app.engine.testgen.text import comment_lines, docstring_safe, one_line

BREAKS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029"]
INJECTED = "EVIL = __import__('os').getcwd()"


def _module_names(source: str) -> set[str]:
    return {t.id for node in ast.parse(source).body if isinstance(node, ast.Assign) for t in node.targets
            if isinstance(t, ast.Name)}


@pytest.mark.parametrize("brk", BREAKS)
def test_a_line_break_in_a_comment_line_stays_in_the_comment(brk):
    text = comment_lines([f"Fuzzer: python fuzz.py --seed 1{brk}{INJECTED}"])
    assert text.count("\n") == 1 and text.startswith("# ") and "EVIL" not in _module_names(text)
    assert one_line(f"a{brk}b").replace(" ", "") == "ab"


@pytest.mark.parametrize("brk", BREAKS)
def test_the_fuzz_test_comment_cannot_carry_code(brk):
    spec = FuzzTestSpec("test_fuzz_seed_1", "import math\nmath.sqrt(-1)\n", "pytest", (), (),
                        (f"Fuzzer: python fuzz.py --seed 1{brk}{INJECTED}",), "seed 1: ValueError")
    test = fuzz_test(spec, "tests/test_new.py", None, f'Fuzz repros{brk}{INJECTED}"""{brk}{INJECTED}')
    for text in (test.marked, test.unmarked):
        assert "EVIL" not in _module_names(text), text
        assert all(line.lstrip().startswith("#") or '"""' in line or "\\" in line
                   for line in text.splitlines() if "EVIL" in line), text


@pytest.mark.parametrize("hostile", ['t.py::test_x"""\nEVIL = 1\n"""', "t.py::test_x\\", 't.py::test_"'])
def test_a_hostile_test_id_or_reason_stays_inside_the_generated_docstrings(hostile):
    for source in (stress_test(hostile, reason=hostile).source, node_repro_test(hostile, reason=hostile).source):
        tree = ast.parse(source)
        assert "EVIL" not in _module_names(source)
        assert isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value.value, str)


def test_ordinary_text_is_unchanged():
    assert docstring_safe('Failure: AssertionError: "a" != "b" (1)') == 'Failure: AssertionError: "a" != "b" (1)'
    assert one_line("python tools/fuzz.py --seed 7") == "python tools/fuzz.py --seed 7"
