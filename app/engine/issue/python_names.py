"""Which names a pasted Python snippet uses without defining them.

One definition of "defined" for every reader of a report: `markdown` (is a repro
self-contained? which standard imports does it leave out?), `loose` (is a trailing line
printed output rather than code?) and `triage` (why is a fragment not runnable?).
Pure AST work: nothing runs.
"""

from __future__ import annotations

import ast
import builtins
import io
import tokenize

_BUILTINS = set(dir(builtins)) | {"__file__", "__name__", "__builtins__"}


def parse_python(source: str) -> ast.Module | None:
    """The module's AST, or None when `source` is not Python."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def undefined_names(source: str) -> list[str]:
    """Names the code reads but never defines, imports or gets from builtins (scope-insensitive).

    A star import could define anything, so it makes the answer empty."""
    tree = parse_python(source)
    if tree is None:
        return []
    defined, used = set(_BUILTINS), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else defined).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
        elif isinstance(node, ast.alias):
            if node.name == "*":
                return []
            defined.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            defined.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            defined.update(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            defined.add(node.name)
    return sorted(used - defined)


def without_comments(source: str) -> str:
    """`source` with its `#` comments removed (a commented-out `# device = "cuda"` does not run);
    line structure kept. Text that does not tokenize has its whole-line comments removed."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type != tokenize.COMMENT]
        return tokenize.untokenize(tokens)
    except (tokenize.TokenError, IndentationError, SyntaxError, ValueError):
        return "\n".join("" if line.lstrip().startswith("#") else line for line in source.splitlines())


__all__ = ["parse_python", "undefined_names", "without_comments"]
