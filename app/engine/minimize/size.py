"""How big a program is, and how a finished one is printed.

The gate accepts a candidate only if its `size_key` is strictly smaller than the current one:
tokens first (what a reader has to read), then non-blank lines, then a weight for heavy
constructs (a `torch.compile` on inductor costs more than on `eager`), then characters, then
the magnitude of integer literals (so `1024 -> 8` and `8 -> 1` both count as progress).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import NamedTuple

from app.engine.minimize.parsing import parse

_SKIPPED_TOKENS = {tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER,
                   tokenize.ENCODING}
# Virtual tokens charged for a compile backend: simpler backends win even if naming one costs text,
# and going back to Inductor is never a simplification, however many keywords it drops (dropping
# `backend="eager", fullgraph=True, dynamic=False` at once saves 12 tokens): an Inductor candidate
# compiles C++ for seconds, and the gate refuses it without running it.
_BACKEND_WEIGHT = {"inductor": 24, "aot_eager": 3, "eager": 0}


class Size(NamedTuple):
    tokens: int
    lines: int
    chars: int
    literals: int


def count_tokens(source: str) -> int:
    """Python tokens in `source`, not counting layout (NL, INDENT/DEDENT) and comments.

    An f-string counts its placeholders too (`{`, the expression's tokens, `}`), as Python
    3.12's tokenizer splits it: `f"bad {name}"` is four tokens, the text it printed one.
    """
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return sum(_string_tokens(tok.string) if tok.type == tokenize.STRING else 1
               for tok in tokens if tok.type not in _SKIPPED_TOKENS)


_FSTRING = re.compile(r"^[rRbB]?[fF]")


def _string_tokens(text: str) -> int:
    if not _FSTRING.match(text) or "{" not in text:
        return 1
    try:
        node = parse(text, mode="eval").body
    except SyntaxError:
        return 1
    fields = [value for value in ast.walk(node) if isinstance(value, ast.FormattedValue)]
    return 1 + sum(2 + count_tokens(ast.unparse(field.value)) - 1 for field in fields)  # (its NEWLINE)


def nonblank_lines(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip())


def code_lines(source: str) -> int:
    """Non-blank, non-comment lines that are not imports: the seed's measure of a repro's size."""
    tree = parse(source)
    import_lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            import_lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return sum(
        1
        for number, line in enumerate(source.splitlines(), start=1)
        if line.strip() and not line.strip().startswith("#") and number not in import_lines
    )


def _weight(tree: ast.AST) -> tuple[int, int]:
    backend_weight, literals = 0, 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_compile(node.func):
            backend = next((k.value for k in node.keywords if k.arg == "backend"), None)
            name = backend.value if isinstance(backend, ast.Constant) else "inductor" if backend is None else ""
            backend_weight += _BACKEND_WEIGHT.get(name, 0)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            backend_weight += sum(_BACKEND_WEIGHT["inductor"] for d in node.decorator_list if _is_compile(d))
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            literals += abs(node.value)
    return backend_weight, literals


def _is_compile(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "compile"
            and isinstance(func.value, ast.Name) and func.value.id == "torch")


def size_key(source: str, tree: ast.AST | None = None) -> Size:
    """The order candidates are compared in (smaller is better)."""
    tree = tree if tree is not None else parse(source)
    backend_weight, literals = _weight(tree)
    return Size(count_tokens(source) + backend_weight, nonblank_lines(source), len(source), literals)


def tidy(source: str) -> str:
    """`ast.unparse` plus layout: a blank line after imports, two around top-level definitions."""
    tree = parse(source)
    chunks: list[tuple[str, str]] = []
    for stmt in tree.body:
        kind = "def" if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else (
            "import" if isinstance(stmt, (ast.Import, ast.ImportFrom)) else "code")
        chunks.append((kind, ast.unparse(stmt)))
    out: list[str] = []
    previous = None
    for kind, text in chunks:
        if previous is not None:
            if kind == "def" or previous == "def":
                out.append("\n\n")
            elif previous == "import" and kind != "import":
                out.append("\n")
        out.append(text + "\n")
        previous = kind
    return "".join(out)
