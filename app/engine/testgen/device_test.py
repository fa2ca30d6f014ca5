"""A fuzzed program as a unit test in the repository's own conventions (seed 000, step 1).

Two styles, both device-generic and both written twice, with and without the
expected-failure marker (the verify steps and the two commits need both):

- `pytorch`: a `TestCase` from `torch.testing._internal.common_utils`, instantiated per device
  with `instantiate_device_type_tests(..., only_for=<devices>)`; only the failing devices get
  `@expectedFailureCPU` / `@expectedFailureCUDA` / ... (the seed's caveat: an expectedFailure
  on a device that passes breaks that device's CI). A program comparing with
  `torch.testing.assert_close` / `torch.allclose` and both tolerances compares through
  `self.assertEqual(..., rtol=, atol=)` with the fuzzer's tolerances.
- `pytest`: a function parametrized over the devices; the failing ones carry
  `pytest.mark.xfail(strict=True)`.

A program that names no device becomes one case, marked as a whole. The body is cleaned
first (`app.engine.testgen.fuzz_body`): no leaked global state, readable names, a comparison
that fails the test with a message naming the bug. The seed, the fuzzer's
command and the devices go into a comment above the test, one line each (`app.engine.testgen.text`:
nothing quoted can end its comment line). `insert_test` adds the block to an
existing file (missing imports after its last top-level import, the block before its
`if __name__ == "__main__":`) or makes a new file.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from app.engine.testgen.fuzz_body import clean_body
from app.engine.testgen.repro_test import prepare_repro_body
from app.engine.testgen.text import comment_lines, docstring_safe

_DEVICE_DECORATORS = {"cpu": "CPU", "cuda": "CUDA", "mps": "MPS", "xpu": "XPU", "meta": "Meta", "hpu": "HPU"}
COMMON_UTILS = "torch.testing._internal.common_utils"
COMMON_DEVICE = "torch.testing._internal.common_device_type"


@dataclass(frozen=True)
class FuzzTestSpec:
    name: str  # test function name: test_fuzz_seed_42
    program: str
    style: str  # pytorch | pytest
    devices: tuple[str, ...]  # device kinds the test runs on; () = device-independent
    failing: tuple[str, ...]  # devices that fail (expected failures)
    comment: tuple[str, ...]  # lines of the comment above the test (seed, command, error)
    reason: str


@dataclass(frozen=True)
class FuzzTest:
    path: str
    name: str
    marked: str  # the whole file with the expected-failure markers
    unmarked: str  # the whole file without them
    style: str
    rewrote_assertion: bool


def decorator_for(device: str) -> tuple[str, tuple[str, str]]:
    """(decorator text, (module, name) to import) of an expected failure on `device`."""
    if device in _DEVICE_DECORATORS:
        name = f"expectedFailure{_DEVICE_DECORATORS[device]}"
        return f"@{name}", (COMMON_DEVICE, name)
    return f"@expectedFailureOn({device!r})", (COMMON_DEVICE, "expectedFailure as expectedFailureOn")


class _AssertEqual(ast.NodeTransformer):
    """`torch.testing.assert_close(a, b, rtol=r, atol=a)` / `assert torch.allclose(a, b, rtol=, atol=)`
    -> `self.assertEqual(a, b, rtol=r, atol=a)` (both tolerances, or none, as assertEqual wants)."""

    changed = False

    def _rewrite(self, call: ast.Call) -> ast.Expr | None:
        name = ast.unparse(call.func)
        kwargs = {k.arg: k for k in call.keywords if k.arg in ("rtol", "atol")}
        if not (name.endswith(("assert_close", "allclose")) and len(call.args) >= 2 and len(kwargs) in (0, 2)):
            return None
        self.changed = True
        target = ast.Attribute(ast.Name("self", ast.Load()), "assertEqual", ast.Load())
        return ast.Expr(ast.Call(target, call.args[:2], list(kwargs.values())))

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        if isinstance(node.value, ast.Call) and ast.unparse(node.value.func).endswith("assert_close"):
            return self._rewrite(node.value) or node
        return node

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        if isinstance(node.test, ast.Call):
            return self._rewrite(node.test) or node
        return node


def _body(spec: FuzzTestSpec) -> tuple[str, bool]:
    body = clean_body(prepare_repro_body(spec.program), style=spec.style,
                      device="device" if spec.devices else "'cpu'", bug=spec.reason)
    if spec.style != "pytorch":
        return body, False
    tree = ast.parse(body)
    rewriter = _AssertEqual()
    tree = ast.fix_missing_locations(rewriter.visit(tree))
    return (ast.unparse(tree) if rewriter.changed else body), rewriter.changed


def _indent(text: str, level: int) -> str:
    pad = "    " * level
    return "".join(f"{pad}{line}\n" if line.strip() else "\n" for line in text.splitlines())


def test_block(spec: FuzzTestSpec, *, marked: bool) -> tuple[str, list[tuple[str, str]], bool]:
    """(the block of code, the imports it needs as (module, name), whether assertions were rewritten)."""
    body, rewrote = _body(spec)
    comment = comment_lines(spec.comment)  # one line each: a line break in a quoted command is not code
    if spec.style == "pytorch":
        return (*_pytorch_block(spec, body, comment, marked), rewrote)
    return (*_pytest_block(spec, body, comment, marked), rewrote)


def _pytest_block(spec: FuzzTestSpec, body: str, comment: str, marked: bool) -> tuple[str, list[tuple[str, str]]]:
    xfail = f"pytest.mark.xfail(strict=True, reason={spec.reason[:200]!r})"
    if not spec.devices:
        decorator = f"@{xfail}\n" if marked else ""
        return f"{comment}{decorator}def {spec.name}():\n{_indent(body, 1)}", [("", "pytest")]
    params = []
    for device in spec.devices:
        if marked and device in spec.failing:
            params.append(f"        pytest.param({device!r}, marks={xfail}, id={device!r}),\n")
        else:
            params.append(f"        pytest.param({device!r}, id={device!r}),\n")
    text = (f'{comment}@pytest.mark.parametrize(\n    "device",\n    [\n{"".join(params)}    ],\n)\n'
            f"def {spec.name}(device):\n{_indent(body, 1)}")
    return text, [("", "pytest")]


def _class_name(name: str) -> str:
    return "Test" + "".join(part.capitalize() for part in name.removeprefix("test_").split("_") if part)


def _pytorch_block(spec: FuzzTestSpec, body: str, comment: str, marked: bool) -> tuple[str, list[tuple[str, str]]]:
    klass = _class_name(spec.name)
    imports: list[tuple[str, str]] = [(COMMON_UTILS, "TestCase")]
    if not spec.devices:
        decorator = "    @unittest.expectedFailure\n" if marked else ""
        if marked:  # the unmarked file (the fix commit) must not keep an unused import
            imports.append(("", "unittest"))
        return (f"{comment}class {klass}(TestCase):\n{decorator}    def {spec.name}(self):\n"
                f"{_indent(body, 2)}", imports)
    decorators = ""
    if marked:
        for device in spec.failing:
            text, needed = decorator_for(device)
            decorators += f"    {text}\n"
            imports.append(needed)
    imports.append((COMMON_DEVICE, "instantiate_device_type_tests"))
    only_for = ", ".join(repr(d) for d in spec.devices) + ("," if len(spec.devices) == 1 else "")
    return (f"{comment}class {klass}(TestCase):\n{decorators}    def {spec.name}(self, device):\n"
            f"{_indent(body, 2)}\n\ninstantiate_device_type_tests({klass}, globals(), only_for=({only_for}))\n",
            imports)


def _bound_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


def _import_lines(tree: ast.Module | None, imports: list[tuple[str, str]]) -> str:
    bound = _bound_names(tree) if tree else set()
    lines: dict[str, list[str]] = {}
    for module, name in imports:
        local = name.split(" as ")[-1]
        if local in bound:
            continue
        bound.add(local)
        lines.setdefault(module, []).append(name)
    out = [f"import {name}" for name in lines.pop("", [])]
    out += [f"from {module} import {', '.join(names)}" for module, names in lines.items()]
    return "".join(line + "\n" for line in out)


def insert_test(existing: str | None, block: str, imports: list[tuple[str, str]], *, style: str, title: str) -> str:
    """`existing` (a test file's text, or None for a new file) with the block and its imports."""
    if existing is None:
        head = f'"""{docstring_safe(title)}"""\n\n' + _import_lines(None, imports)
        tail = (f'\n\nif __name__ == "__main__":\n    from {COMMON_UTILS} import run_tests\n\n    run_tests()\n'
                if style == "pytorch" else "")
        return f"{head}\n\n{block}{tail}"
    tree = ast.parse(existing)
    lines = existing.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    new_imports = _import_lines(tree, imports)
    main = next((n for n in tree.body if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test)), None)
    cut = (main.lineno - 1) if main else len(lines)
    before, after = "".join(lines[:cut]).rstrip("\n"), "".join(lines[cut:])
    text = f"{before}\n\n\n{block}" + (f"\n\n{after}" if after else "")
    if new_imports:
        last_import = max((n.end_lineno for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))),
                          default=_docstring_end(tree))
        text_lines = text.splitlines(keepends=True)
        text = "".join(text_lines[:last_import]) + new_imports + "".join(text_lines[last_import:])
    return text


def _docstring_end(tree: ast.Module) -> int:
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first.end_lineno or 0
    return 0


def fuzz_test(spec: FuzzTestSpec, path: str, existing: str | None, title: str) -> FuzzTest:
    """The test file at `path` with the test added, marked and unmarked."""
    texts = []
    rewrote = False
    for marked in (True, False):
        block, imports, rewrote = test_block(spec, marked=marked)
        texts.append(insert_test(existing, block, imports, style=spec.style, title=title))
    for text in texts:
        ast.parse(text)  # a generated file that does not parse is a bug here, not in the repo
    return FuzzTest(path, spec.name, texts[0], texts[1], spec.style, rewrote)
