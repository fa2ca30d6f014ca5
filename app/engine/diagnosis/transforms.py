"""Source-to-source transforms that make an experiment's variant of a repro.

Every transform edits the text in place (spans found with `ast`, replaced from the end), so the
variant keeps the repro's lines: a frame in a variant's traceback names the same line as in the
repro. A prologue (`with_prologue`) goes on one physical line: a blank or comment line before
the first statement when there is one, else a new first line (`shift` says so).

Each transform returns None when there is nothing to change (no `torch.compile` call, no
DataLoader): the experiment does not apply to this repro.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

Span = tuple[int, int, int, int]  # start line, start col, end line, end col (ast positions)
COMPILE_NAMES = ("torch.compile",)
FLOAT_DTYPES = ("float32", "float", "float16", "half", "bfloat16")
FACTORIES = {"randn", "rand", "randint", "zeros", "ones", "empty", "full", "arange", "linspace", "ones_like",
             "randperm", "eye", "normal", "tensor", "Linear", "Conv1d", "Conv2d", "Conv3d", "Embedding",
             "view", "reshape", "expand", "repeat", "new_zeros", "new_ones", "new_empty", "new_full"}


@dataclass
class Edits:
    """Text replacements at ast spans, applied from the end so earlier spans stay valid."""

    source: str

    def __post_init__(self) -> None:
        self.lines = self.source.splitlines(keepends=True)
        self.changes: list[tuple[Span, str]] = []

    def offset(self, line: int, col: int) -> int:
        """Character offset of an ast (1-based line, utf-8 byte column) position."""
        before = sum(len(text) for text in self.lines[:line - 1])
        return before + len(self.lines[line - 1].encode()[:col].decode(errors="replace"))

    def segment(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node) or ""

    def replace(self, node_or_span: ast.AST | Span, text: str) -> None:
        span = node_or_span if isinstance(node_or_span, tuple) else _span(node_or_span)
        self.changes.append((span, text))

    def apply(self) -> str | None:
        if not self.changes:
            return None
        out = self.source
        taken: list[tuple[int, int]] = []
        for (l1, c1, l2, c2), text in sorted(self.changes, key=lambda c: c[0], reverse=True):
            start, end = self.offset(l1, c1), self.offset(l2, c2)
            if any(start < e and s < end for s, e in taken):
                continue  # overlapping: the outer change wins (it was applied first from the end)
            taken.append((start, end))
            out = out[:start] + text + out[end:]
        return out


def _span(node: ast.AST) -> Span:
    return node.lineno, node.col_offset, node.end_lineno, node.end_col_offset  # type: ignore[attr-defined]


def _name(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # a node ast cannot print back: not one of ours
        return ""


def _compile_names(tree: ast.AST) -> tuple[str, ...]:
    """`torch.compile`, plus the name `from torch import compile [as c]` binds (never the builtin)."""
    names = list(COMPILE_NAMES)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "torch":
            names += [alias.asname or alias.name for alias in node.names if alias.name == "compile"]
    return tuple(names)


def compile_calls(tree: ast.AST) -> list[ast.Call]:
    """`torch.compile(...)` calls (also as `@torch.compile(...)` decorators)."""
    names = _compile_names(tree)
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _name(n.func) in names]


def bare_compile_decorators(tree: ast.AST) -> list[ast.expr]:
    """`@torch.compile` used without a call."""
    names = _compile_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found += [d for d in node.decorator_list if _name(d) in names]
    return found


def uses_compile(source: str) -> bool:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return bool(compile_calls(tree) or bare_compile_decorators(tree))


def _set_keyword(edits: Edits, call: ast.Call, name: str, value: str) -> None:
    """`name=value` in `call`: its value replaced, or the keyword added before the `)`."""
    for keyword in call.keywords:
        if keyword.arg == name:
            edits.replace(keyword.value, value)
            return
    end_line, end_col = call.end_lineno, call.end_col_offset  # type: ignore[attr-defined]
    inside = edits.source[edits.offset(call.func.end_lineno, call.func.end_col_offset):  # type: ignore[attr-defined]
                          edits.offset(end_line, end_col) - 1]
    has_args = bool(call.args or call.keywords)
    sep = "" if not has_args or inside.rstrip().endswith(",") else ", "
    edits.replace((end_line, end_col - 1, end_line, end_col - 1), f"{sep}{name}={value}")


def compile_with(source: str, **keywords: str) -> str | None:
    """Every `torch.compile` with these keywords (`backend="'eager'"`, `dynamic="True"`)."""
    tree = ast.parse(source)
    edits = Edits(source)
    for call in compile_calls(tree):
        for name, value in keywords.items():
            _set_keyword(edits, call, name, value)
    for decorator in bare_compile_decorators(tree):
        args = ", ".join(f"{k}={v}" for k, v in keywords.items())
        edits.replace(decorator, f"{_name(decorator)}({args})")
    return edits.apply()


def compile_backend(source: str, backend: str) -> str | None:
    """Every `torch.compile` with `backend`; `mode`/`options` (Inductor's) are dropped for others."""
    extra = {} if backend == "inductor" else {"mode": "None", "options": "None"}
    tree = ast.parse(source)
    edits = Edits(source)
    for call in compile_calls(tree):
        _set_keyword(edits, call, "backend", repr(backend))
        for name, value in extra.items():
            if any(k.arg == name for k in call.keywords):
                _set_keyword(edits, call, name, value)
    for decorator in bare_compile_decorators(tree):
        edits.replace(decorator, f"{_name(decorator)}(backend={backend!r})")
    return edits.apply()


def compile_backends(source: str) -> list[str]:
    """The backends the repro compiles with (string constants; "inductor" when none is named)."""
    found = []
    tree = ast.parse(source)
    for call in compile_calls(tree):
        value = next((k.value for k in call.keywords if k.arg == "backend"), None)
        found.append(value.value if isinstance(value, ast.Constant) and isinstance(value.value, str)
                     else ("inductor" if value is None else "?"))
    found += ["inductor"] * len(bare_compile_decorators(tree))
    return found


def without_compile(source: str) -> str | None:
    """`torch.compile(f, ...)` -> `f`; `@torch.compile(...)` -> `@(lambda f: f)`: plain eager."""
    tree = ast.parse(source)
    edits = Edits(source)
    decorators = {id(d) for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                    ast.ClassDef)) for d in n.decorator_list}
    for call in compile_calls(tree):
        if id(call) in decorators or not call.args:
            edits.replace(call, "(lambda fn: fn)")
        else:
            edits.replace(call, f"({edits.segment(call.args[0])})")
    for decorator in bare_compile_decorators(tree):
        edits.replace(decorator, "(lambda fn: fn)")
    return edits.apply()


def _statement_of(tree: ast.Module, target: ast.AST) -> ast.stmt | None:
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            for stmt in getattr(node, field, []) or []:
                if isinstance(stmt, ast.stmt) and any(n is target for n in ast.walk(stmt)) and \
                        isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)):
                    return stmt
    return None


def reset_before_compiles(source: str, reset: str = "torch._dynamo.reset()") -> str | None:
    """`torch._dynamo.reset()` before every statement that compiles (when there are 2 or more)."""
    tree = ast.parse(source)
    calls = compile_calls(tree)
    if len(calls) + len(bare_compile_decorators(tree)) < 2:
        return None
    edits = Edits(source)
    for call in calls:
        stmt = _statement_of(tree, call)
        if stmt is not None:
            edits.replace((stmt.lineno, stmt.col_offset, stmt.lineno, stmt.col_offset), f"{reset}; ")
    return edits.apply()


def _int_constant(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def dataloaders_single_process(source: str) -> str | None:
    """`DataLoader(..., num_workers=N)` -> `num_workers=0` (and the options only workers take off)."""
    tree = ast.parse(source)
    edits = Edits(source)
    off = {"persistent_workers": "False", "prefetch_factor": "None", "multiprocessing_context": "None",
           "worker_init_fn": "None"}
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        if not _name(call.func).endswith("DataLoader"):
            continue
        workers = next((k for k in call.keywords if k.arg == "num_workers"), None)
        if workers is None or _int_constant(workers.value) == 0:
            continue
        edits.replace(workers.value, "0")
        for keyword in call.keywords:
            if keyword.arg in off:
                edits.replace(keyword.value, off[keyword.arg])
    return edits.apply()


def to_float64(source: str) -> str | None:
    """Float dtypes -> `torch.float64`, `.float()`/`.half()`/`.bfloat16()` -> `.double()`."""
    tree = ast.parse(source)
    edits = Edits(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _name(node.value) == "torch" and node.attr in FLOAT_DTYPES:
            edits.replace(node, "torch.float64")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args \
                and node.func.attr in ("float", "half", "bfloat16") and _name(node.func.value) != "torch":
            end_line, end_col = node.func.end_lineno, node.func.end_col_offset
            edits.replace((end_line, end_col - len(node.func.attr), end_line, end_col), "double")
    return edits.apply()


def smaller_sizes(source: str, factor: int, *, at_least: int = 64) -> str | None:
    """Integer sizes >= `at_least` divided by `factor`: literals in the arguments of tensor
    factories, layers and reshapes, and the module-level `NAME = <int>` constants those name."""
    tree = ast.parse(source)
    edits = Edits(source)
    named: set[str] = set()
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        name = _name(call.func).rsplit(".", 1)[-1]
        if name not in FACTORIES:
            continue
        values = [*call.args, *(k.value for k in call.keywords if k.arg in ("size", "shape", "end", "steps",
                                                                            "in_features", "out_features",
                                                                            "num_embeddings", "high"))]
        for value in values:
            for node in ([value] if not isinstance(value, (ast.Tuple, ast.List)) else value.elts):
                number = _int_constant(node)
                if number is not None and number >= at_least:
                    edits.replace(node, str(max(1, number // factor)))
                named |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and stmt.targets[0].id in named and (number := _int_constant(stmt.value)) is not None \
                and number >= at_least:
            edits.replace(stmt.value, str(max(1, number // factor)))
    return edits.apply()


_DEVICE_STRING = re.compile(r"^cuda(:\d+)?$")


def to_cpu(source: str) -> str | None:
    """`.cuda(...)` -> `.cpu()`, device strings "cuda"/"cuda:N" -> "cpu": the script on CPU."""
    tree = ast.parse(source)
    edits = Edits(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "cuda" \
                and _name(node.func.value) != "torch":
            end_line, end_col = node.func.end_lineno, node.func.end_col_offset
            edits.replace((end_line, end_col - 4, node.end_lineno, node.end_col_offset), "cpu()")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _DEVICE_STRING.match(node.value):
            edits.replace(node, "'cpu'")
    return edits.apply()


def _first_statement(tree: ast.Module) -> ast.stmt | None:
    for index, node in enumerate(tree.body):
        docstring = index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
            and isinstance(node.value.value, str)
        future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if not (docstring or future):
            return node
    return None


def with_prologue(source: str, prologue: str, name: str = "<scrub-experiment>") -> tuple[str, int]:
    """(the source with `prologue` run first, lines added before the repro's own lines).

    The prologue runs as one line, `exec(compile(...))` into the module's globals, after the
    docstring and `from __future__` imports: on a blank or comment line just before the first
    statement when there is one (nothing moves), else on a new line before it (`shift` 1)."""
    line = f"exec(compile({prologue!r}, {name!r}, 'exec'), globals())"
    tree = ast.parse(source)
    first = _first_statement(tree)
    lines = source.splitlines(keepends=True)
    if first is None:
        return source + ("" if source.endswith("\n") or not source else "\n") + line + "\n", 0
    index = first.lineno - 1
    previous = lines[index - 1] if index > 0 else None
    if previous is not None and (not previous.strip() or previous.lstrip().startswith("#")) \
            and not _inside_string(tree, index - 1):
        lines[index - 1] = line + ("  " + previous.strip() if previous.strip() else "") + "\n"
        return "".join(lines), 0
    lines.insert(index, line + "\n")
    return "".join(lines), 1


def _inside_string(tree: ast.Module, line_index: int) -> bool:
    """Whether the 0-based line is inside a multi-line string (a docstring's blank line)."""
    row = line_index + 1
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str) and n.lineno < row <= n.end_lineno
               for n in ast.walk(tree))
