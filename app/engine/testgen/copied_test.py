"""A CI failure's reproduction test made of the failing test's own code, beside it.

The failing test (`path::test_x`, `path::TestX::test_x`, a PyTorch device-type test
`path::TestXCPU::test_x_cpu`) is copied, renamed `test_x_repro`, marked as an expected failure
in the file's own idiom and inserted right after the original, so it keeps the module's imports,
helpers, fixtures and class setup:

- a pytest function: `@pytest.mark.xfail(strict=True, reason=...)`;
- a `unittest.TestCase` method: `@unittest.expectedFailure`;
- a method of a class instantiated per device (`instantiate_device_type_tests`, the method takes
  `device`): `@expectedFailure<Device>` for the device that failed only, so the other devices'
  copies must pass.

A test that is parametrized (pytest's `parametrize`, PyTorch's `@ops`/`@dtypes`/`@parametrize`)
is not copied: one copy would run every parameter, and only one failed. `copied_test` then
says why (`Uncopyable`), and the caller falls back to running the original node alone.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from app.engine.testgen.device_test import decorator_for

_PARAMETRIZED = re.compile(r"parametrize|\bops\b|dtypes|\bparametrize\b|\bonlyOn|\binstantiate_parametrized")
_DEVICE_SUFFIX = re.compile(r"_(cpu|cuda|xpu|mps|meta|hpu)(?:_\d+)?(?:_[a-z]+\d*)*$")


class Uncopyable(ValueError):
    """The failing test cannot be copied on its own; the message says why."""


@dataclass(frozen=True)
class CopiedTest:
    path: str
    name: str  # the new function's name
    node_id: str  # how to run it alone
    marked: str  # the whole file with the copy, marked
    unmarked: str  # the whole file with the copy, unmarked (the fix commit)
    idiom: str  # pytest | unittest | device


def _split(node_id: str) -> tuple[str, str | None, str]:
    parts = node_id.split("::")
    if len(parts) == 2:
        return parts[0], None, parts[1]
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    raise Uncopyable(f"{node_id} is not a path::test or path::Class::test node id")


def _find(tree: ast.Module, klass: str | None, name: str) -> tuple[ast.FunctionDef, ast.ClassDef | None, str | None]:
    """(the function, its class, the device of an instantiated device-type test)."""
    if klass is None:
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == name:
                return node, None, None
        raise Uncopyable(f"no function {name} at the top of the file")
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    device = None
    owner = classes.get(klass)
    if owner is None:  # PyTorch: TestFooCPU is made from TestFoo, test_x_cpu from test_x
        base = re.sub(r"(CPU|CUDA|XPU|MPS|META|HPU)$", "", klass)
        owner, found = classes.get(base), _DEVICE_SUFFIX.search(name)
        if owner is None or found is None or base == klass:
            raise Uncopyable(f"no class {klass} in the file")
        device, name = found.group(1), name[:found.start()]
    for node in owner.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node, owner, device
    raise Uncopyable(f"no method {name} in class {owner.name}")


def _bound(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _with_import(text: str, tree: ast.Module, line: str, name: str) -> str:
    if name in _bound(tree):
        return text
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    lines = text.splitlines(keepends=True)
    at = max((n.end_lineno for n in imports), default=0)
    if not imports and tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant):
        at = tree.body[0].end_lineno
    lines.insert(at, line + "\n")
    return "".join(lines)


def copied_test(text: str, node_id: str, *, reason: str) -> CopiedTest:
    """The file `text` with a marked copy of the failing test `node_id` after the original."""
    path, klass, name = _split(node_id)
    if "[" in name:
        raise Uncopyable(f"{name} is one parameter of a parametrized test")
    tree = ast.parse(text)
    func, owner, device = _find(tree, klass, name)
    if any(_PARAMETRIZED.search(ast.unparse(d)) for d in func.decorator_list):
        raise Uncopyable(f"{func.name} is parametrized: a copy would run every parameter")
    lines = text.splitlines(keepends=True)
    start = min([d.lineno for d in func.decorator_list] + [func.lineno]) - 1
    end = func.end_lineno or func.lineno
    block = "".join(lines[start:end])
    indent = re.match(r"[ \t]*", lines[func.lineno - 1]).group(0)
    new_name = f"{func.name}_repro"
    block = re.sub(rf"^({indent}(?:async\s+)?def\s+){re.escape(func.name)}\b", rf"\g<1>{new_name}", block,
                   count=1, flags=re.MULTILINE)
    if owner is None:
        idiom, mark, need = "pytest", f"@pytest.mark.xfail(strict=True, reason={reason[:200]!r})", ("import pytest", "pytest")
    elif device is None:
        idiom, mark, need = "unittest", "@unittest.expectedFailure", ("import unittest", "unittest")
    else:
        idiom = "device"
        mark, (module, imported) = decorator_for(device)
        need = (f"from {module} import {imported}", imported.split(" as ")[-1])
    comment = f"{indent}# Reproduces the CI failure of {node_id} (Scrubbot): {reason[:150]}\n"
    marked_block = comment + f"{indent}{mark}\n" + block
    insert = "".join(lines[:end]) + "\n" + ("\n" if owner is None else "")
    rest = "".join(lines[end:])
    marked = _with_import(insert + marked_block + rest, tree, *need)
    unmarked = insert + comment + block + rest
    for out in (marked, unmarked):
        ast.parse(out)
    new_node = f"{path}::{klass}::{new_name}_{device}" if device else \
        (f"{path}::{klass}::{new_name}" if klass else f"{path}::{new_name}")
    return CopiedTest(path, new_name, new_node, marked, unmarked, idiom)
