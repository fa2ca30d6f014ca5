"""Strategy 8 of the seed: try simpler compile backends when the bug is not backend-specific."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from app.engine.minimize.edits import Edit, NodeIndex
from app.engine.minimize.passes._ast import dotted

SIMPLER_BACKENDS = ("eager", "aot_eager")  # the size key charges inductor > aot_eager > eager


def simpler_backends(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """`torch.compile(f)` / `@torch.compile` on inductor -> `backend="eager"`, else "aot_eager"."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and dotted(node.func) == "torch.compile":
            others = [k for k in node.keywords if k.arg != "backend"]
            for backend in SIMPLER_BACKENDS:
                keyword = ast.keyword("backend", ast.Constant(backend))
                yield [Edit(index.number(node), ast.Call(node.func, node.args, [*others, keyword]))]
        elif isinstance(node, ast.Attribute) and dotted(node) == "torch.compile" and _is_decorator(index, node):
            for backend in SIMPLER_BACKENDS:
                call = ast.Call(node, [], [ast.keyword("backend", ast.Constant(backend))])
                yield [Edit(index.number(node), call)]


def _is_decorator(index: NodeIndex, node: ast.AST) -> bool:
    parent = index.parent(node)
    return isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and node in parent.decorator_list
