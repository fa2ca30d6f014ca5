"""Strategy 7 of the seed: remove unnecessary control flow."""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator

from app.engine.minimize.edits import Edit, NodeIndex


def unroll_loops(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """A loop becomes its body, run once: `for x in xs: body` -> `x = next(iter(xs)); body`.

    `for i in range(n)` binds `i = 0`, `for b in [m, n]` binds `b = m`; when the body does not read the loop variable it is
    simply the body. `break`/`continue` at the loop's own level are dropped.
    """
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.AsyncFor)):
            body = _without_jumps(node.body)
            yield [Edit(index.number(node), body)]
            yield [Edit(index.number(node), [ast.Assign([node.target], _first(node.iter)), *body])]
        elif isinstance(node, ast.While):
            yield [Edit(index.number(node), _without_jumps(node.body))]


def take_branches(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """`if c: a else: b` -> `a` or `b`; `x if c else y` is left to the expression passes."""
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            yield [Edit(index.number(node), node.body)]
            if node.orelse:
                yield [Edit(index.number(node), node.orelse)]


def strip_try_and_with(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """`try: body except ...` -> `body` (the error then escapes), `with cm: body` -> `body`."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Try, ast.With, ast.AsyncWith)):
            yield [Edit(index.number(node), node.body)]


class _StripJumps(ast.NodeTransformer):
    """`break`/`continue` of the unrolled loop become `pass`; nested loops keep theirs."""

    def visit_Break(self, node: ast.Break) -> ast.Pass:
        return ast.Pass()

    visit_Continue = visit_Break  # type: ignore[assignment]

    def _keep(self, node: ast.AST) -> ast.AST:
        return node

    visit_For = visit_AsyncFor = visit_While = visit_FunctionDef = visit_AsyncFunctionDef = _keep  # type: ignore
    visit_ClassDef = _keep  # type: ignore[assignment]


def _without_jumps(body: list[ast.stmt]) -> list[ast.stmt]:
    stripper = _StripJumps()
    kept = [stripper.visit(copy.deepcopy(s)) for s in body if not isinstance(s, (ast.Break, ast.Continue))]
    return kept or [ast.Pass()]


def _first(iterable: ast.expr) -> ast.expr:
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range":
        return iterable.args[0] if len(iterable.args) > 1 else ast.Constant(0)
    if isinstance(iterable, (ast.List, ast.Tuple)) and iterable.elts and not isinstance(iterable.elts[0], ast.Starred):
        return iterable.elts[0]  # `for b in [m1, m2]` -> `b = m1`
    return ast.Call(ast.Name("next", ast.Load()), [ast.Call(ast.Name("iter", ast.Load()), [iterable], [])], [])
