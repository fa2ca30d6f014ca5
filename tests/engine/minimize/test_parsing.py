"""`parse` survives CPython 3.11's AST-converter race (python/cpython#106905), which once killed a
whole minimization in CI: a thread switch inside one conversion (here: a garbage collection that
runs a blocking `__del__`) and a parse on another thread meanwhile."""

from __future__ import annotations

import ast
import gc
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from app.engine.minimize import parsing
from app.engine.minimize.parsing import parse

SOURCE = "\n".join(f"def f{i}(x):\n    return [y * {i} for y in range(x)]" for i in range(50))
RACE_FIXED_IN_CPYTHON = sys.version_info >= (3, 11, 8)


def _parse_while_another_thread_parses(parse_: Callable[[str], ast.AST]) -> str:
    """Parse SOURCE; a collection during the conversion lets another thread parse, then goes on.
    Returns "ok" or the SystemError's text."""
    interrupted, other_done = threading.Event(), threading.Event()

    class Trap:
        def __init__(self) -> None:
            self.cycle = self  # only the cyclic collector frees it: mid-conversion, at threshold 1

        def __del__(self) -> None:
            interrupted.set()
            other_done.wait(timeout=0.5)  # with the lock, the other thread cannot finish first

    def other() -> None:
        interrupted.wait(timeout=10)
        parse_(SOURCE)
        other_done.set()

    thread = threading.Thread(target=other)
    thread.start()
    threshold = gc.get_threshold()
    try:
        gc.collect()
        gc.set_threshold(1)
        Trap()
        try:
            parse_(SOURCE)
            return "ok"
        except SystemError as error:
            return str(error)
    finally:
        gc.set_threshold(*threshold)
        interrupted.set()
        thread.join()


@pytest.mark.skipif(RACE_FIXED_IN_CPYTHON, reason="this CPython's converter has no shared depth counter")
def test_the_harness_reproduces_the_race_with_plain_ast_parse() -> None:
    outcomes = [_parse_while_another_thread_parses(ast.parse) for _ in range(6)]
    assert any("recursion depth mismatch" in outcome for outcome in outcomes), outcomes


def test_parse_is_not_broken_by_a_parse_on_another_thread() -> None:
    outcomes = [_parse_while_another_thread_parses(parse) for _ in range(3)]
    assert outcomes == ["ok"] * 3


def test_a_mismatch_from_a_parse_outside_the_lock_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    real_parse, calls = ast.parse, []

    def racing_once(source: str, mode: str = "exec") -> ast.AST:
        calls.append(source)
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=144, after=37)")
        return real_parse(source, mode=mode)

    monkeypatch.setattr(parsing.ast, "parse", racing_once)
    tree = parse("x = 1")
    assert isinstance(tree, ast.Module) and len(calls) == 2


def test_other_errors_pass_through_unretried(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SyntaxError):
        parse("def (")
    calls = []

    def broken(source: str, mode: str = "exec") -> ast.AST:
        calls.append(source)
        raise SystemError("something else")

    monkeypatch.setattr(parsing.ast, "parse", broken)
    with pytest.raises(SystemError, match="something else"):
        parse("x = 1")
    assert len(calls) == 1


def test_a_race_that_never_stops_is_raised_after_the_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    def always(source: str, mode: str = "exec") -> ast.AST:
        raise SystemError("AST constructor recursion depth mismatch (before=1, after=2)")

    monkeypatch.setattr(parsing.ast, "parse", always)
    with pytest.raises(SystemError, match="mismatch"):
        parse("x = 1")


def test_eval_mode_gives_an_expression() -> None:
    assert isinstance(parse("1 + 2", mode="eval"), ast.Expression)


def test_no_module_of_the_minimizer_parses_around_the_lock() -> None:
    package = Path(parsing.__file__).parent
    offenders = [str(path.relative_to(package)) for path in sorted(package.rglob("*.py"))
                 if path.name != "parsing.py" and "ast.parse(" in path.read_text()]
    assert offenders == []
