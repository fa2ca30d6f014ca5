"""A fuzzed program as data: which device it runs on, which operations it calls, which
tolerances it compares with, whether it compiles.

Device: a program names its device with a top-level constant (`DEVICE = "cuda"`, or
`device = ...`) or `torch.set_default_device("cuda")`; `on_device` rewrites that one place,
so the same program runs per device. A program with neither runs the same everywhere
(`device_of` is None) and is treated as device-independent.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass

DEVICE_NAMES = ("DEVICE", "device")
_TOLERANCES = ("rtol", "atol")
# Calls that say nothing about the operation under test.
_PLUMBING = {
    "print", "len", "range", "tuple", "list", "dict", "int", "float", "str", "isinstance", "zip",
    "enumerate", "manual_seed", "randn", "rand", "randint", "zeros", "ones", "empty", "full", "tensor",
    "arange", "compile", "allclose", "assert_close", "sum", "backward", "contiguous", "to", "clone",
    "item", "detach", "requires_grad_", "set_default_device", "reset", "abs", "max", "min", "isclose",
    "AssertionError", "RuntimeError", "ValueError", "Exception", "format", "cuda", "cpu", "float32",
}


def _device_assignment(node: ast.stmt) -> bool:
    return (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in DEVICE_NAMES and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def _default_device_call(node: ast.stmt) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and ast.unparse(node.value.func).endswith("set_default_device") and len(node.value.args) == 1
            and isinstance(node.value.args[0], ast.Constant))


def device_of(source: str) -> str | None:
    """The device the program names, or None when it names none it can be moved off."""
    for node in ast.parse(source).body:
        if _device_assignment(node):
            return node.value.value  # type: ignore[attr-defined]
        if _default_device_call(node):
            return node.value.args[0].value  # type: ignore[attr-defined]
    return None


def on_device(source: str, device: str) -> str:
    """The program with its device constant (or default-device call) set to `device`."""
    lines = source.splitlines(keepends=True)
    for node in ast.parse(source).body:
        if _device_assignment(node) or _default_device_call(node):
            target = node.value if _device_assignment(node) else node.value.args[0]  # type: ignore[attr-defined]
            row = target.lineno - 1
            line = lines[row]
            lines[row] = line[:target.col_offset] + repr(device) + line[target.end_col_offset:]
            return "".join(lines)
    return source


def split_device(source: str) -> tuple[str, str]:
    """(the statement naming the device, the rest of the program); ("", source) without one.

    The minimizer works on the rest and every candidate runs with the statement in front: it
    can drop the device from the calls when the bug does not need it, but never inline it away
    while the bug does."""
    lines = source.splitlines(keepends=True)
    for node in ast.parse(source).body:
        if _device_assignment(node) or _default_device_call(node):
            start, end = node.lineno - 1, node.end_lineno or node.lineno
            return "".join(lines[start:end]).rstrip("\n") + "\n", "".join(lines[:start] + lines[end:])
    return "", source


def needs_device(prologue: str, rest: str) -> bool:
    """Whether the rest still uses the device the prologue names (a default-device call always does)."""
    node = ast.parse(prologue).body[0]
    if not _device_assignment(node):
        return True
    name = node.targets[0].id  # type: ignore[attr-defined]
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(ast.parse(rest)))


def operations(source: str) -> list[str]:
    """Library operations the program calls, most used first (`torch.nn.functional.gelu` ->
    `gelu`): what names the test, picks its file and selects the related tests."""
    counts: Counter[str] = Counter()
    defined = {n.name for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func).rsplit(".", 1)[-1]
            if name.isidentifier() and name not in _PLUMBING and name not in defined and not name.startswith("_"):
                counts[name] += 1
    return [name for name, _ in counts.most_common()]


def tolerances(source: str) -> dict[str, float]:
    """The `rtol` / `atol` the program compares with (keyword constants, or top-level
    `RTOL = ...` / `ATOL = ...`); empty when it uses none."""
    found: dict[str, float] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.keyword) and node.arg in _TOLERANCES and isinstance(node.value, ast.Constant):
            found.setdefault(node.arg, float(node.value.value))
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id.lower() in _TOLERANCES and isinstance(node.value, ast.Constant)):
            found.setdefault(node.targets[0].id.lower(), float(node.value.value))
    return found


def compiles(source: str) -> bool:
    """Whether the program compiles something (`torch.compile`, `*.compile(...)`): an
    eager-vs-compiled bug belongs with the compiler's tests."""
    return bool(re.search(r"\bcompile\s*\(", source))


@dataclass(frozen=True)
class ProgramFacts:
    device: str | None
    operations: tuple[str, ...]
    tolerances: dict[str, float]
    compiles: bool

    @classmethod
    def of(cls, source: str) -> ProgramFacts:
        return cls(device_of(source), tuple(operations(source)), tolerances(source), compiles(source))
