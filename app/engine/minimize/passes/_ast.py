"""AST helpers shared by the passes: statement blocks, dotted names, name uses."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.engine.minimize.edits import NodeIndex

BLOCK_FIELDS = ("body", "orelse", "finalbody")


def blocks(tree: ast.AST) -> Iterator[list[ast.stmt]]:
    """Every statement list in the tree, outermost first (module body, then nested bodies)."""
    for node in ast.walk(tree):
        for field in BLOCK_FIELDS:
            body = getattr(node, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                yield body
        if isinstance(node, ast.Try):
            for handler in node.handlers:
                yield handler.body


def dotted(node: ast.AST) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def call_name(node: ast.AST) -> str | None:
    """The dotted name of the function a call statement or expression calls."""
    if isinstance(node, ast.Expr):
        node = node.value
    if isinstance(node, ast.Await):
        node = node.value
    return dotted(node.func) if isinstance(node, ast.Call) else None


def loaded_names(tree: ast.AST) -> set[str]:
    """Names read anywhere in `tree` (including the roots of attribute chains)."""
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}


def parameter_defaults(args: ast.arguments) -> dict[str, ast.expr]:
    """Parameter name -> its default expression, for the parameters that have one."""
    positional = args.posonlyargs + args.args
    defaults = dict(zip((a.arg for a in positional[len(positional) - len(args.defaults):]), args.defaults))
    defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
    return defaults


def name_uses(tree: ast.AST, name: str) -> list[ast.Name]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name
            and isinstance(n.ctx, ast.Load)]


def outermost(statements: list[ast.stmt], index: NodeIndex | None = None) -> list[ast.stmt]:
    """Drop statements nested inside another statement of the list (deleting the outer suffices).

    With the tree's `index`, each statement's ancestors are looked up (its depth) instead of
    walking every statement's subtree.
    """
    if index is not None:
        listed = {id(stmt) for stmt in statements}
        unique: dict[int, ast.stmt] = {}
        for stmt in statements:
            parent = index.parent(stmt)
            while parent is not None and id(parent) not in listed:
                parent = index.parent(parent)
            if parent is None:
                unique.setdefault(id(stmt), stmt)
        return list(unique.values())
    inner: set[int] = set()
    for stmt in statements:
        for child in ast.walk(stmt):
            if child is not stmt:
                inner.add(id(child))
    kept: dict[int, ast.stmt] = {}
    for stmt in statements:
        if id(stmt) not in inner:
            kept.setdefault(id(stmt), stmt)
    return list(kept.values())


def chunks(items: list, smallest: int = 1) -> Iterator[list]:
    """ddmin's schedule: the whole list, then halves, quarters... down to single items.

    Within one granularity, later chunks come first: in a repro, code after the failing line is
    dead, so deleting from the end succeeds early and shrinks every later candidate.
    """
    size = len(items)
    while size >= smallest:
        starts = range(0, len(items), size)
        for start in reversed(starts):
            yield items[start : start + size]
        if size == 1:
            break
        size = max(1, size // 2)
