"""A fuzzed program's body made fit for a test suite: no leaked global state, readable, asserting.

A TorchFuzz program is a script: it sets process-wide state at the top
(`torch.set_default_device("cuda")`, `torch._dynamo.config.x = ...`) and never restores it, so
as a test it leaks into every test after it; PyTorch's `TestCase.tearDown` then fails ("torch
function mode stack was leaked"). Here:

- `torch.set_default_device(...)` becomes `with torch.device(<the test's device>):` around
  the rest (a mode popped on exit); `torch._dynamo.config.NAME = V` and
  `torch._inductor.config.NAME = V` become `with torch._dynamo.config.patch(NAME=V):`;
- the generator's `var_node_<N>` names become `t0, t1, ...` in order of first use (PyTorch's
  own fuzzer-issue tests read that way), and its progress prints ("Eager Success! ✅") go;
- a comparison that ends the script (`sys.exit(1)`, `exit(1)`, `raise SystemExit(1)`) fails the test instead, with a
  message naming the bug (`self.fail(...)` / `pytest.fail(...)`);
- a result the script assigns and never reads (`result_compiled = compiled_program(*args)`),
  also inside the program's functions (a minimized compiled function without its `return`),
  becomes the bare call: the test runs it, and a linter has no unused variable to flag.
"""

from __future__ import annotations

import ast
import re

_CONFIGS = ("torch._dynamo.config", "torch._inductor.config", "torch._functorch.config")
_VAR = re.compile(r"(?<![A-Za-z0-9])(_[a-z_]+?_)?(var_node_\d+)\b")


def readable_names(source: str) -> str:
    """`var_node_12` -> `t0`, ... in order of first appearance (names already `t<k>` are kept clear
    of); the generator's helpers of a node (`_index_var_node_12`, `_input_size_var_node_12`)
    follow it: `t0_index`, `t0_input_size`."""
    taken = set(re.findall(r"\bt\d+\b", source))
    mapping: dict[str, str] = {}
    counter = 0
    for match in _VAR.finditer(source):
        name = match.group(2)
        if name not in mapping:
            while f"t{counter}" in taken:
                counter += 1
            mapping[name] = f"t{counter}"
            counter += 1

    def rename(match: re.Match) -> str:
        helper, name = match.group(1), mapping[match.group(2)]
        return f"{name}_{helper.strip('_')}" if helper else name

    return _VAR.sub(rename, source)


def _config_assignment(node: ast.stmt) -> tuple[str, str, ast.expr] | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute):
        owner = ast.unparse(node.targets[0].value)
        if owner in _CONFIGS:
            return owner, node.targets[0].attr, node.value
    return None


def _is_call(node: ast.stmt, suffix: str) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and \
        ast.unparse(node.value.func).endswith(suffix)


def _progress_print(node: ast.stmt) -> bool:
    return _is_call(node, "print") and all(isinstance(a, ast.Constant) for a in node.value.args)  # type: ignore[attr-defined]


class _ExitToFail(ast.NodeTransformer):
    def __init__(self, fail: str, message: str) -> None:
        self.fail, self.message, self.changed = fail, message, False

    def visit_Raise(self, node: ast.Raise) -> ast.AST:
        if node.exc is not None and ast.unparse(node.exc).startswith("SystemExit") and \
                ast.unparse(node.exc) not in ("SystemExit(0)", "SystemExit()"):
            self.changed = True
            return ast.parse(f"{self.fail}({self.message!r})").body[0]
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        if isinstance(node.value, ast.Call) and ast.unparse(node.value.func) in ("sys.exit", "exit", "quit") \
                and node.value.args and ast.unparse(node.value.args[0]) not in ("0", "None"):
            self.changed = True
            return ast.parse(f"{self.fail}({self.message!r})").body[0]
        return node


def _bare_unread_calls(body: list[ast.stmt]) -> list[ast.stmt]:
    """`name = call(...)` -> `call(...)` where nothing reads `name` (a local a linter flags)."""
    read = {n.id for node in body for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    out: list[ast.stmt] = []
    for node in body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id not in read and isinstance(node.value, ast.Call)):
            node = ast.copy_location(ast.Expr(node.value), node)
        out.append(node)
    return out


class _BareUnreadLocals(ast.NodeTransformer):
    """The same inside every function the program defines (the compiled one): a minimized
    function lost its `return`, and its last `name = call(...)` is a local nothing reads."""

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        if not any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in ast.walk(node)):
            node.body = _bare_unread_calls(node.body)
        return node


def clean_body(body: str, *, style: str, device: str = "device", bug: str = "the fuzzed program fails") -> str:
    """The test body without global state leaks, with readable names and a failing assertion."""
    tree = ast.parse(readable_names(body))
    kept: list[ast.stmt] = []
    imports: list[ast.stmt] = []  # stay first, outside the scopes (they bind names the scopes use)
    default_device = False
    patches: dict[str, list[ast.keyword]] = {}
    for node in tree.body:
        config = _config_assignment(node)
        if config:
            patches.setdefault(config[0], []).append(ast.keyword(arg=config[1], value=config[2]))
        elif _is_call(node, "set_default_device"):
            default_device = True
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and not kept:
            imports.append(node)
        elif not _progress_print(node):
            kept.append(node)
    fail = "self.fail" if style == "pytorch" else "pytest.fail"
    kept = _bare_unread_calls([_BareUnreadLocals().visit(_ExitToFail(fail, bug).visit(node)) for node in kept]) \
        or [ast.Pass()]
    for owner, keywords in reversed(list(patches.items())):
        call = ast.Call(ast.parse(f"{owner}.patch", mode="eval").body, [], keywords)
        kept = [ast.With([ast.withitem(call)], kept)]
    if default_device:
        kept = [ast.With([ast.withitem(ast.parse(f"torch.device({device})", mode="eval").body)], kept)]
    text = ast.unparse(ast.fix_missing_locations(ast.Module(body=imports + kept, type_ignores=[])))
    if re.search(r"\bsys\.", text) and not re.search(r"^import sys$", text, re.MULTILINE):
        text = "import sys\n" + text
    return text
