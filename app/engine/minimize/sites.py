"""Where an exception was raised: the failing operation, part of what must stay the same.

A message says what went wrong, not where: `IndexError: index out of range in self` comes
from an embedding and from `index_select` alike, and `The size of tensor a (2) must match ...`
from any broadcasting operator. So a failure that is not at a check (`checks`) also records:

- `raiser`: the innermost frame when it is library code, as `torch/nn/functional.py:embedding`
  (the path from the package root, no line number): the Python function the error left
  (`failing_site`);
- `site_ops`: the operations the program's own innermost line calls itself
  (`dataflow._Flow.called`: `self.emb(x)` -> `embedding`, `a + b` -> `add`, `.item()`), for an
  error raised by C++ called straight from that line (`out + identity`), or re-raised there by
  Dynamo (a graph break at `if x.item() > 0`).

A candidate must leave the same library function, or, when the program's own line raised, call
one of the same operations on its failing line.
"""

from __future__ import annotations

import ast
import re

from app.engine.minimize.dataflow import called_operations
from app.engine.minimize.parsing import parse

_TRACEBACK = "Traceback (most recent call last):"
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)')
_ROOTS = ("site-packages/", "dist-packages/")
_STDLIB = re.compile(r"/lib/python\d+\.\d+/")


def failing_site(text: str, program: str) -> tuple[str, int | None]:
    """(`raiser`, the program's line the error is blamed on) from the last traceback in `text`.

    `raiser` is `package/module.py:function` of the innermost frame when that frame is library
    code, else "". The line is the program's innermost frame; but when the message itself names
    frames of the program (Dynamo's "from user code:" stack under the exception), the last of
    those: Dynamo re-raises from its own wrappers, the error is the user's line.
    """
    block = text[text.rfind(_TRACEBACK):] if _TRACEBACK in text else ""
    stack, named = [], []
    in_stack = True
    for line in block.splitlines()[1:]:
        frame = _FRAME.match(line)
        if in_stack and frame:
            stack.append(frame)
        elif in_stack and line and not line[0].isspace():
            in_stack = False  # the exception header: what follows is its message
        elif frame:
            named.append(frame)
    mine = [f for f in named if _is(f, program)]
    if mine:
        return "", int(mine[-1].group("line"))
    own = [f for f in stack if _is(f, program)]
    line = int(own[-1].group("line")) if own else None
    if not stack or _is(stack[-1], program):
        return "", line
    return f"{_package_path(stack[-1].group('path'))}:{stack[-1].group('function')}", line


def _is(frame: re.Match, program: str) -> bool:
    return frame.group("path").rsplit("/", 1)[-1] == program


def _package_path(path: str) -> str:
    for root in _ROOTS:
        if root in path:
            return path.rsplit(root, 1)[1]
    stdlib = _STDLIB.search(path)
    return path[stdlib.end():] if stdlib else path.rsplit("/", 1)[-1]


def site_operations(source: str, line: int) -> frozenset[str]:
    """The operations the statement at `line` calls itself (a compound statement: its header)."""
    try:
        tree = parse(source)
    except SyntaxError:
        return frozenset()
    statements = [node for node in ast.walk(tree) if isinstance(node, ast.stmt)
                  and node.lineno <= line <= (node.end_lineno or node.lineno)]
    if not statements:
        return frozenset()
    statement = max(statements, key=lambda node: node.lineno)  # the innermost one
    return called_operations(tree, _header(statement))


def _header(statement: ast.stmt) -> list[ast.AST]:
    if isinstance(statement, (ast.If, ast.While)):
        return [statement.test]
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        return [statement.iter]
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in statement.items]
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Try)):
        return []
    return [statement]
