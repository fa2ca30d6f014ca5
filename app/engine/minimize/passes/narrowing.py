"""What a person narrows by reading the failure: the one item a loop's check names, and
lengths that are constants.

    for name, param in model.named_parameters():                    assert torch.isfinite(
        assert torch.isfinite(param.grad), f"bad grad in {name}" ->      model.value.weight.grad), "bad grad in value.weight"

when the check failed with "bad grad in value.weight": the loop over every parameter becomes
the check of the one its message names (`model.value.weight`; `blocks.0.w` reads
`model.blocks[0].w`). And `len(torch.ones(3))`, `len([a, b])` -> `3`, `2`.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Iterator

from app.engine.minimize.edits import Edit, NodeIndex
from app.engine.minimize.passes.inline import Substitute

# Methods yielding (dotted name, item) pairs of a module: the name is the item's path on it.
NAMED_ITEMS = frozenset({"named_parameters", "named_buffers", "named_modules", "named_children"})
_PATH = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.\w+)+(?![\w.])")
# Constructors whose first positional argument, an int, is the length of what they make.
_SIZED = frozenset({"ones", "zeros", "empty", "randn", "rand", "full", "arange", "randperm"})


def narrow_named_loops(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """A failing `for name, item in obj.named_parameters():` -> its body for the item the
    failure message names (`obj.<path>` for `item`, the path's text for `name`).

    Only for a loop on the failing stack, a message naming a dotted path (`value.weight`), and
    a body that does not rebind the loop's names or leave the loop (`break`, `continue`).
    """
    paths = list(dict.fromkeys(_PATH.findall(index.failing_message)))
    if not paths or not index.failing_lines:
        return
    for loop in (n for n in index.nodes if isinstance(n, ast.For) and not n.orelse):
        if not _on_failing_stack(loop, index.failing_lines):
            continue
        names = _name_item_targets(loop.target)
        owner = _named_items_owner(loop.iter)
        if names is None or owner is None or not _plain_body(loop, names):
            continue
        for path in paths:
            item = _item_at(owner, path)
            body = [Substitute({names[0]: ast.Constant(path), names[1]: item}).visit(copy.deepcopy(s))
                    for s in loop.body]
            yield [Edit(index.number(loop), body)]


def fold_lengths(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """`len(torch.ones(3, 2))` -> `3` (a constructor's first size), `len([a, b])` -> `2`."""
    for node in index.nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"
                and len(node.args) == 1 and not node.keywords):
            continue
        length = _length(node.args[0])
        if length is not None:
            yield [Edit(index.number(node), ast.Constant(length))]


def _length(node: ast.expr) -> int | None:
    if isinstance(node, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return len(node.elts)
    if not (isinstance(node, ast.Call) and node.args and not isinstance(node.args[0], ast.Starred)):
        return None
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    first = node.args[0]
    if isinstance(first, (ast.List, ast.Tuple)) and first.elts:  # `torch.ones((3, 2))`
        first = first.elts[0]
    if name in _SIZED and isinstance(first, ast.Constant) and type(first.value) is int and first.value >= 0:
        if name == "arange" and len(node.args) > 1:
            return None  # `arange(start, end)`
        return first.value
    return None


def _on_failing_stack(loop: ast.For, lines: tuple[int, ...]) -> bool:
    return any(loop.lineno <= line <= (loop.end_lineno or loop.lineno) for line in lines)


def _name_item_targets(target: ast.expr) -> tuple[str, str] | None:
    if isinstance(target, ast.Tuple) and len(target.elts) == 2 and all(isinstance(e, ast.Name) for e in target.elts):
        return target.elts[0].id, target.elts[1].id  # type: ignore[attr-defined]
    return None


def _named_items_owner(iterable: ast.expr) -> ast.expr | None:
    """`obj` of `obj.named_parameters()` (no arguments: a prefix or recursion flag changes the names)."""
    if (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute)
            and iterable.func.attr in NAMED_ITEMS and not iterable.args and not iterable.keywords):
        return iterable.func.value
    return None


def _plain_body(loop: ast.For, names: tuple[str, str]) -> bool:
    for node in (n for s in loop.body for n in ast.walk(s)):
        if isinstance(node, (ast.Break, ast.Continue, ast.Return, ast.Yield, ast.YieldFrom,
                             ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return False
        if isinstance(node, ast.Name) and node.id in names and not isinstance(node.ctx, ast.Load):
            return False
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return False  # (a comprehension may bind the same names)
    return True


def _item_at(owner: ast.expr, path: str) -> ast.expr:
    """`model` + `blocks.0.weight` -> `model.blocks[0].weight`."""
    node = copy.deepcopy(owner)
    for part in path.split("."):
        if part.isdigit():
            node = ast.Subscript(node, ast.Constant(int(part)), ast.Load())
        else:
            node = ast.Attribute(node, part, ast.Load())
    return node
