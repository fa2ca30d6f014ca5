"""What a repro's code says about itself, read from its AST before it runs.

- `checks_itself(source)`: the script verifies its own result (`assert`, `assert_close`,
  `assertEqual`, `raise`), so a clean exit means the checked behaviour is right now.
- `cpu_part(source)`: the script with its CUDA lines dropped, for a CPU bug whose report
  compares against a GPU result ("wrong on CPU, correct on GPU"): the CPU computation is the
  bug, the `.cuda()` line only a reference.
- `cpu_is_the_wrong_side(text)`: the report says the CPU result is the wrong one.
- `never_runs(source)`: what a script defines when it never calls anything (a model pasted
  without the lines that use it).
"""

from __future__ import annotations

import ast
import re

_ASSERT_CALL = re.compile(r"^(?:assert\w*|assert_\w+|fail\w*)$")
_CUDA = re.compile(r"""\.cuda\(|['"]cuda(?::[^'"\n]*)?['"]|torch\.cuda\.(?!is_available)|device\s*=\s*['"]cuda""")
_CPU_WRONG = re.compile(
    r"(?:wrong|incorrect|bad|nan|inf|differ\w*|mismatch\w*)\W+(?:\w+\W+){0,6}?(?:on|with|for)\s+(?:the\s+)?cpu\b"
    r"|\bcpu\b\W+(?:\w+\W+){0,4}?(?:is|are|gives?|returns?|produces?)\s+(?:\w+\s+){0,2}?(?:wrong|incorrect|nan|inf)"
    r"|(?:correct|right|fine|as expected|works)\W+(?:\w+\W+){0,4}?(?:on|with)\s+(?:the\s+)?(?:gpu|cuda)\b",
    re.IGNORECASE,
)
_GPU_WRONG = re.compile(
    r"(?:wrong|incorrect|bad|nan|inf|zeros?|differ\w*|mismatch\w*)\W+(?:\w+\W+){0,6}?(?:on|with|for)\s+(?:the\s+)?(?:gpu|cuda)\b"
    r"|(?:correct|right|fine|as expected|works)\W+(?:\w+\W+){0,4}?(?:on|with)\s+(?:the\s+)?cpu\b",
    re.IGNORECASE,
)


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def checks_itself(source: str) -> bool:
    """An `assert`, a `raise`, or a call such as `torch.testing.assert_close`, `np.testing.
    assert_allclose` or `self.assertEqual` anywhere in the script."""
    tree = _parse(source)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assert, ast.Raise)):
            return True
        if isinstance(node, ast.Call) and _ASSERT_CALL.match(_call_name(node)):
            return True
    return False


def never_runs(source: str) -> list[str]:
    """The functions and classes a script defines when nothing outside a function body calls
    anything (no call, no decorator): a model pasted without the lines that use it runs
    clean whatever the bug. [] when it runs something, defines nothing or does not parse."""
    tree = _parse(source)
    if tree is None:
        return []
    defined = [node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    if not defined:
        return []
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Call) or getattr(node, "decorator_list", None):
            return []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            pending.extend(getattr(node.args, "defaults", []) + [d for d in node.args.kw_defaults if d is not None])
            continue  # a function body runs only when called
        pending.extend(ast.iter_child_nodes(node))
    return defined


def cpu_is_the_wrong_side(text: str) -> bool:
    """The report blames the CPU result ("wrong results on CPU (correct on GPU)") and does not
    blame the GPU one."""
    return bool(_CPU_WRONG.search(text or "")) and not _GPU_WRONG.search(text or "")


def _names_read(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _names_bound(node: ast.AST) -> set[str]:
    bound = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        bound.add(node.name)
    return bound


class _DropCuda(ast.NodeTransformer):
    """Removes statements that touch CUDA and, transitively, those reading what they bound."""

    def __init__(self) -> None:
        self.tainted: set[str] = set()
        self.dropped = 0

    def _drops(self, stmt: ast.stmt) -> bool:
        """A simple statement is judged whole; a compound one by its header only (its body is
        visited statement by statement); a definition by nothing (its calls decide)."""
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Try)):
            return False
        header: list[ast.AST]
        if isinstance(stmt, (ast.If, ast.While)):
            header = [stmt.test]
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            header = [stmt.target, stmt.iter]
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            header = list(stmt.items)
        else:
            header = [stmt]
        text = " ".join(ast.unparse(part) for part in header)
        return bool(_CUDA.search(text)) or any(_names_read(part) & self.tainted for part in header)

    def _body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        kept = []
        for stmt in body:
            if self._drops(stmt):
                self.tainted |= _names_bound(stmt)
                self.dropped += 1
                continue
            kept.append(self.visit(stmt))
        return kept or [ast.Pass()]

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for name in ("body", "orelse", "finalbody"):
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(node, name, self._body(value))
        for handler in getattr(node, "handlers", []) or []:
            handler.body = self._body(handler.body)
        return node


def cpu_part(source: str) -> str | None:
    """`source` without its CUDA statements (and what only they feed), or None when nothing
    was CUDA, it does not parse, or no torch call is left to run."""
    tree = _parse(source)
    if tree is None:
        return None
    dropper = _DropCuda()
    tree.body = dropper._body(tree.body)
    if not dropper.dropped:
        return None
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    if not any("torch" in ast.unparse(call.func) or isinstance(call.func, ast.Attribute) for call in calls):
        return None
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


_WINDOWS = re.compile(r"\b[A-Z]:\\|~\\AppData|\\site-packages\\|OS:\s*Microsoft Windows|\bWindows (?:10|11|Server)\b|\bwin32\b|\bwin-amd64\b")
_MACOS = re.compile(r"OS:\s*macOS|\bmacOS\b|\bDarwin\b|\bApple M[1-4]\b|\barm64-apple\b")


_ARCHITECTURES = {  # a machine name (`platform.machine()`) -> how reports name it
    "aarch64": re.compile(r"\baarch64\b|\barm64\b|\bJetson\b|\btegra\b", re.I),
    "ppc64le": re.compile(r"\bppc64le\b|\bPOWER(?:8|9|10)\b", re.I),
    "s390x": re.compile(r"\bs390x\b", re.I),
    "x86_64": re.compile(r"\bx86_64\b|\bx86-64\b|\bamd64\b", re.I),
}
_SAME_MACHINE = {"arm64": "aarch64", "amd64": "x86_64"}


def reported_platform(text: str, machine: str | None = None) -> str | None:
    """"windows" or "macos" when the report comes from that platform (its paths, its
    `collect_env` lines); with this worker's `machine` (`platform.machine()`), "linux-aarch64"
    (and so on) when it comes from a Linux machine of another architecture (a Jetson board, a
    POWER server) and never names this one; None when it says nothing or says this platform."""
    if _WINDOWS.search(text or ""):
        return "windows"
    if _MACOS.search(text or ""):
        return "macos"
    own = _SAME_MACHINE.get((machine or "").lower(), (machine or "").lower())
    if own in _ARCHITECTURES and not _ARCHITECTURES[own].search(text or ""):
        for name, pattern in _ARCHITECTURES.items():
            if name != own and pattern.search(text or ""):
                return f"linux-{name}"
    return None
