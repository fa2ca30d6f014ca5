"""Strategies 4 and 5 of the seed: smaller tensors, and no device or dtype requirements."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from app.engine.minimize.edits import Edit, NodeIndex
from app.engine.minimize.parsing import parse
from app.engine.minimize.passes._ast import dotted

SMALL_INTS = (1, 2, 4, 8)
_DEVICE_METHODS = {"cuda", "cpu", "to", "half", "double", "bfloat16", "float", "contiguous",
                   "requires_grad_", "pin_memory"}
_DEVICE_KEYWORDS = {"device", "dtype", "non_blocking", "pin_memory", "memory_format", "layout"}
_DTYPES = {"torch.float16", "torch.half", "torch.bfloat16", "torch.float64", "torch.double"}


def shrink_int_literals(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """Large integers -> 1, 2, 4, 8: every occurrence of a value together, then each alone.

    Changing `128` everywhere keeps `Linear(128, 64)` and `randn(32, 128)` consistent, which a
    one-literal-at-a-time reducer cannot do without passing through a different error.
    """
    by_value: dict[int, list[ast.Constant]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and type(node.value) is int and node.value > 1:
            by_value.setdefault(node.value, []).append(node)
    for value in sorted(by_value, reverse=True):
        nodes = by_value[value]
        groups = [nodes] + ([[n] for n in nodes] if len(nodes) > 1 else [])
        for group in groups:
            for small in (s for s in SMALL_INTS if s < value):
                yield [Edit(index.number(n), ast.Constant(small)) for n in group]


def remove_device_dtype(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """Drop `.cuda()`, `.to(...)`, `.half()`..., `device=`/`dtype=` arguments; dtypes -> float32."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in _DEVICE_METHODS):
            yield [Edit(index.number(node), node.func.value)]
        if isinstance(node, ast.Call):
            doomed = [k for k in node.keywords if k.arg in _DEVICE_KEYWORDS]
            if doomed:
                yield [Edit(index.number(k)) for k in doomed]
        if isinstance(node, ast.Attribute) and dotted(node) in _DTYPES:
            yield [Edit(index.number(node), parse("torch.float32", mode="eval").body)]


def fold_messages(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """An f-string message on a failing line -> the text it printed, where that text is a name.

    `assert ok, f"non-finite gradient in {name}"` failed with "non-finite gradient in
    value.weight": the message becomes that constant, and the loop that made `name` can go.
    A placeholder that printed digits (a count, a shape) stays computed: it means something
    (`checks.value_meanings`).
    """
    message = index.failing_message
    if not message:
        return
    for line in set(index.failing_lines):
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr) and node.lineno <= line <= (node.end_lineno or node.lineno) \
                    and _is_message(index, node):
                folded = _folded(node, message)
                if folded is not None:
                    yield [Edit(index.number(node), folded)]


def _is_message(index: NodeIndex, node: ast.JoinedStr) -> bool:
    parent = index.parent(node)
    return (isinstance(parent, ast.Assert) and parent.msg is node) or (
        isinstance(parent, ast.Call) and node in parent.args and isinstance(index.parent(parent), ast.Raise))


def _folded(node: ast.JoinedStr, message: str) -> ast.expr | None:
    pattern = "".join(re.escape(part.value) if isinstance(part, ast.Constant) else "(.*?)" for part in node.values)
    found = re.fullmatch(pattern, message, re.DOTALL)
    if found is None:
        return None
    values: list[ast.expr] = []
    captured = iter(found.groups())
    for part in node.values:
        if isinstance(part, ast.Constant):
            values.append(part)
            continue
        text = next(captured)
        values.append(part if any(c.isdigit() for c in text) else ast.Constant(text))
    if all(isinstance(v, ast.Constant) for v in values):
        return ast.Constant("".join(v.value for v in values))  # type: ignore[attr-defined]
    merged: list[ast.expr] = []
    for value in values:
        if merged and isinstance(value, ast.Constant) and isinstance(merged[-1], ast.Constant):
            merged[-1] = ast.Constant(merged[-1].value + value.value)
        else:
            merged.append(value)
    return ast.JoinedStr(merged) if merged != node.values else None
