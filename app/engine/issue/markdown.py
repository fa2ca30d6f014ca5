"""Bug-report markdown -> repro candidates, the chosen repro, the reported error, a triage.

Seed `001` steps 1-3 as pure functions over GitHub's REST shapes (an issue dict and its
comment dicts). Nothing here runs code or talks to GitHub.

- `code_blocks(markdown)`: fenced (``` / ~~~) and indented blocks with their info string.
- `repro_candidates(issue, comments)`: the Python blocks that look runnable, one per post
  (the longest block of the post), with author, URL and time.
- `select_repro(candidates, op)`: the most recent repro by the original poster, unless a
  commenter posted a strictly shorter, self-contained one.
- `reported_error(text)`: exception class + message, or "segfault" / "hang".
- `triage(issue, comments, repro)`: what to do before running anything.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from app.engine.minimize.size import code_lines  # the project's one measure of repro size
from app.engine.issue import loose
from app.engine.issue.python_names import parse_python, undefined_names  # re-exported: one definition of "defined"
from app.engine.issue.triage import Triage, duplicate_of, needs_cuda, triage  # re-exported: the issue stage API
from app.engine.issue.reported import ReportedError, last_exception, reported_error  # re-exported
from app.engine.issue.repro import Repro  # re-exported

Json = dict[str, Any]

_FENCE_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
_PYTHON_LANGS = {"python", "py", "python3", "py3", "pytorch", "ipython"}
_UNTAGGED = {"", "code"}
_MARKER = "<!-- scrubbot:"
_IPYTHON_PROMPT = re.compile(r"^\s*In \[\d*\]: ", re.MULTILINE)  # `In [3]: x.sum()` parses as an annotation


@dataclass(frozen=True)
class CodeBlock:
    text: str
    lang: str  # the info string's first word, lower-cased; "" when untagged or indented
    start: int = field(default=-1, compare=False)  # the block's first and last line in the text
    end: int = field(default=-1, compare=False)


def code_blocks(markdown: str | None) -> list[CodeBlock]:
    """Every fenced and indented code block, in document order (CommonMark-style fences)."""
    lines = (markdown or "").replace("\r\n", "\n").split("\n")
    blocks: list[CodeBlock] = []
    i, prev_blank = 0, True
    while i < len(lines):
        opened = _FENCE_OPEN.match(lines[i])
        if opened:
            indent, fence, lang = len(opened.group(1)), opened.group(2), opened.group(3).lower()
            body, first, i = [], i, i + 1
            while i < len(lines) and not _closes(lines[i], fence):
                body.append(_dedent(lines[i], indent))
                i += 1
            blocks.append(CodeBlock("\n".join(body).strip("\n"), lang, first, i))
            i, prev_blank = i + 1, False
            continue
        if prev_blank and _indented(lines[i]):
            body, first = [], i
            while i < len(lines) and (_indented(lines[i]) or not lines[i].strip()):
                body.append(lines[i][4:] if lines[i].startswith("    ") else lines[i].lstrip("\t"))
                i += 1
            blocks.append(CodeBlock("\n".join(body).strip("\n"), "", first, i - 1))
            prev_blank = True
            continue
        prev_blank = not lines[i].strip()
        i += 1
    return blocks


def _dedent(line: str, indent: int) -> str:
    """Remove up to `indent` leading spaces (a fence indented by N strips N from its body)."""
    return line[min(indent, len(line) - len(line.lstrip(" "))):]


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0])


def _indented(line: str) -> bool:
    return (line.startswith("    ") or line.startswith("\t")) and bool(line.strip())


def is_python_block(block: CodeBlock) -> bool:
    """Tagged python, or untagged text that parses and does more than echo a value.

    Tracebacks, shell sessions and printed output either fail to parse or are a lone
    expression (`tensor([1., 2.])`), so they are skipped.
    """
    if block.lang not in _PYTHON_LANGS | _UNTAGGED or not block.text.strip():
        return False
    if "Traceback (most recent call last)" in block.text or block.text.lstrip().startswith(">>>") or _IPYTHON_PROMPT.search(
            block.text):
        return False  # a transcript: its input lines are taken by `candidates.repl_source`
    tree = parse_python(block.text)
    if tree is None:
        return False
    if block.lang in _PYTHON_LANGS:
        return True
    if any(_calls_torch(node) for node in tree.body):  # `torch.exp(x)` pasted alone is a repro
        return True
    return any(not isinstance(node, ast.Expr) or isinstance(node.value, ast.Call) for node in tree.body) and any(
        not isinstance(node, ast.Expr) for node in tree.body
    )


def _calls_torch(node: ast.stmt) -> bool:
    """A statement that is a call into torch (`torch.exp(...)`, `torch.nn.functional.relu(...)`):
    code, not printed output (which shows `tensor(...)`)."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    func = node.value.func
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name) and func.id == "torch"


def is_self_contained(source: str) -> bool:
    """It parses and every name it reads is defined, imported or a builtin."""
    return parse_python(source) is not None and not undefined_names(source)


def _login(post: Json) -> str:
    return (post.get("user") or {}).get("login", "")


def _is_bot_post(post: Json) -> bool:
    return (post.get("user") or {}).get("type") == "Bot" or _MARKER in (post.get("body") or "")


def human_posts(issue: Json, comments: list[Json]) -> list[Json]:
    """The issue itself, then its comments, without bots and Scrubbot's own comments."""
    return [issue] + [c for c in comments if not _is_bot_post(c)]


def repro_candidates(issue: Json, comments: list[Json]) -> list[Repro]:
    """Every runnable block of every human post (`selection.repro_candidates`)."""
    from app.engine.issue.selection import repro_candidates as candidates

    return candidates(issue, comments)


# The imports a snippet may leave out and every reader supplies: `torch.exp(x)` pasted alone.
STANDARD_IMPORTS = {"torch": "import torch", "nn": "import torch.nn as nn", "F": "import torch.nn.functional as F",
                    "np": "import numpy as np", "numpy": "import numpy"}


def with_standard_imports(source: str) -> str:
    """`source` with `import torch` (and `nn`, `F`, `np`) added when those are the only names
    it uses without defining; unchanged otherwise."""
    missing = undefined_names(source)
    if not missing or not set(missing) <= STANDARD_IMPORTS.keys():
        return source
    return "\n".join(STANDARD_IMPORTS[name] for name in sorted(missing)) + "\n" + source


def post_scripts(body: str | None) -> list[str]:
    """The runnable Python of one post: its fenced blocks (also inside `>` quotes and
    `<details>`); failing those, scripts pasted without a fence (`loose`)."""
    sources = [b.text for b in code_blocks(body) if is_python_block(b)]
    if not sources:
        sources = [b.text for b in code_blocks(loose.plain_text(body)) if is_python_block(b)]
    return sources or loose.loose_scripts(body)


def select_repro(candidates: list[Repro], trusted: set[str] | frozenset[str] = frozenset()) -> Repro | None:
    """The repro to run first (`selection.select_repro`)."""
    from app.engine.issue.selection import select_repro as select

    return select(candidates, trusted)


_IMAGE = re.compile(
    r"!\[[^\]]*\]\([^)]+\)|<img\b|github\.com/user-attachments/assets/|user-images\.githubusercontent\.com"
    r"|\.(?:png|jpe?g|gif|webp)\b",
    re.IGNORECASE,
)


def has_images(markdown: str | None) -> bool:
    return bool(_IMAGE.search(markdown or ""))


__all__ = [
    "CodeBlock", "Repro", "ReportedError", "Triage", "code_blocks", "code_lines", "duplicate_of", "has_images",
    "is_python_block", "is_self_contained", "post_scripts", "last_exception", "undefined_names", "needs_cuda", "repro_candidates", "reported_error",
    "select_repro", "triage",
]
