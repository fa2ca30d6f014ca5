"""Where names get their values, read off the AST: the small pieces `dataflow` walks with."""

from __future__ import annotations

import ast
from collections.abc import Iterator


def callee_name(func: ast.expr, upper: bool = False) -> str | None:
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    return name if name is not None and (not upper or name[:1].isupper()) else None


def argument(call: ast.Call, name: str, position: int | None) -> Iterator[ast.expr]:
    """What `call` passes for parameter `name` (everything it passes, if that is unclear)."""
    unclear = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
    if unclear or position is None and not any(k.arg == name for k in call.keywords):
        yield from call.args
        yield from (keyword.value for keyword in call.keywords)
        return
    if position is not None and position < len(call.args):
        yield call.args[position]
    yield from (keyword.value for keyword in call.keywords if keyword.arg == name)


def returned(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.expr]:
    """The values `function` itself returns or yields (not those of functions nested in it)."""
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom)) and node.value is not None:
            yield node.value
        pending.extend(ast.iter_child_nodes(node))


def bindings(node: ast.AST) -> Iterator[tuple[ast.AST, ast.AST]]:
    """(target, value) pairs for the statements and expressions that bind names."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            yield from unpacked(target, node.value)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
        yield node.target, node.value
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        yield node.target, node.iter
    elif isinstance(node, ast.NamedExpr):
        yield node.target, node.value
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        yield node.optional_vars, node.context_expr


def unpacked(target: ast.AST, value: ast.AST) -> Iterator[tuple[ast.AST, ast.AST]]:
    """`a, b = f(x), g(x)` binds `a` to `f(x)` only; any other unpacking binds all to all."""
    if (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
            and len(target.elts) == len(value.elts) and not any(isinstance(e, ast.Starred) for e in target.elts)):
        for part, part_value in zip(target.elts, value.elts, strict=True):
            yield from unpacked(part, part_value)
    else:
        yield target, value
