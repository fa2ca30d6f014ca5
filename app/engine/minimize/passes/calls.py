"""Strategy 6 of the seed: simplify the computation."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from app.engine.minimize.edits import Edit, NodeIndex


def drop_keyword_args(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """Drop keyword arguments of a call: all of them at once, then one at a time."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.keywords:
            if len(node.keywords) > 1:
                yield [Edit(index.number(k)) for k in node.keywords]
            for keyword in node.keywords:
                yield [Edit(index.number(keyword))]


def replace_with_subexpression(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """Replace an expression by one of its parts: `f(a, b)` -> `a`, `x.m(y)` -> `x`, `a + b` -> `a`.

    Larger expressions first, since replacing them removes the most.
    """
    expressions = [n for n in ast.walk(tree) if isinstance(n, ast.expr) and _parts(n)]
    expressions.sort(key=lambda n: -sum(1 for _ in ast.walk(n)))
    for node in expressions:
        for part in _parts(node):
            yield [Edit(index.number(node), part)]


def _parts(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.Call):
        receiver = [node.func.value] if isinstance(node.func, ast.Attribute) else []
        arguments = [a for a in node.args if not isinstance(a, ast.Starred)]
        return arguments + [k.value for k in node.keywords if k.arg] + receiver
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse]
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        return [node.value]
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and not isinstance(node.value, ast.Name):
        return [node.value]
    return []
