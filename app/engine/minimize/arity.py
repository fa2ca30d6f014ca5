"""Calls short of a required argument, learned from the runs that said so, refused unrun.

`drop_elements` offers every call with an argument fewer: `nn.Linear(d)`, `allclose(a)`,
`scaled_dot_product_attention(q, k)`. Most of those runs end in `TypeError: allclose()
missing 1 required positional arguments: "other"` (640 of drop_elements' 912 runs on the
benchmark), and the same call, shortened again in every later program, fails the same way.
Python says how many arguments were missing; the call that the candidate shortened, compared
with the current program, says which one it was. So after one such run the gate knows that
`torch.allclose` needs two positional arguments and refuses, unrun, a later candidate that calls
it with fewer (and no keywords or `*args` that could supply them).

A lesson is sound: the failing call had `n` positional arguments and `m` were missing, so the
function needs at least `n + m`, and any call with fewer positional arguments and no keywords
is short of one too. Lessons are learned from rejected runs only, keyed by the callee as
written (`torch.allclose`, `F.softmax`; `.transpose` for a method on a value). Not for the
program's own functions and classes: their signatures change as the program shrinks
(`drop_unused_parameters` takes a parameter and its argument together).
"""

from __future__ import annotations

import ast
import re
from collections import Counter

from app.engine.minimize.parsing import parse

Lessons = dict[str, int]  # callee key -> the fewest positional arguments it takes
_MISSING = re.compile(r"\b([A-Za-z_][\w.]*)\(\) missing (\d+) required positional argument")


def callee_key(call: ast.Call, imported: set[str]) -> str | None:
    """`torch.allclose`, `F.softmax` (a dotted name off an import, as written), `allclose` (a
    name), `.transpose` (a method of a value: `x.transpose`, `f(x).transpose`), or None (a call
    of a call, a subscript...)."""
    parts: list[str] = []
    node = call.func
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and (not parts or node.id in imported):
        return ".".join([node.id, *reversed(parts)])
    return "." + parts[0] if parts else None


def _shapes(tree: ast.AST) -> Counter[tuple[str, int]]:
    """(callee, positional arguments) of every call with neither keywords nor `*args`, except
    calls of what the program itself defines (`def`, `class`: `Block(...)`, `model.forward(...)`)."""
    nodes = list(ast.walk(tree))
    own = {n.name for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    imported = {(a.asname or a.name).split(".")[0] for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in n.names}
    shapes: Counter[tuple[str, int]] = Counter()
    for node in nodes:
        if isinstance(node, ast.Call) and not node.keywords and not any(
                isinstance(a, ast.Starred) for a in node.args):
            key = callee_key(node, imported)
            if key is not None and key.split(".", 1)[0] not in own and key.rsplit(".", 1)[-1] not in own:
                shapes[(key, len(node.args))] += 1
    return shapes


def lesson(message: str, candidate: ast.AST | str, current: ast.AST) -> tuple[str, int] | None:
    """(callee, fewest positional arguments) from a run's TypeError message, if exactly one
    call the candidate shortened (a shape it has and the current program has not) can be the
    one the message names; else None. A candidate given as text is parsed only if the message
    names a missing argument."""
    found = _MISSING.search(message)
    if found is None:
        return None
    if isinstance(candidate, str):
        candidate = parse(candidate)
    name, missing = found.group(1), int(found.group(2))
    name = name.removesuffix(".__init__").rsplit(".", 1)[-1]  # `Block.__init__` -> `Block`
    new = _shapes(candidate) - _shapes(current)
    named = {(key, count) for key, count in new if key.rsplit(".", 1)[-1] == name}
    if len({key for key, _ in named}) != 1:
        return None
    key, count = min(named, key=lambda shape: shape[1])
    return key, count + missing


def learn(lessons: Lessons, learned: tuple[str, int] | None) -> None:
    if learned is not None:
        key, fewest = learned
        lessons[key] = max(lessons.get(key, 0), fewest)


def short_of_an_argument(tree: ast.AST, lessons: Lessons) -> bool:
    """Whether `tree` calls a function it learned about with fewer positional arguments than
    it takes (and nothing that could supply them)."""
    return bool(lessons) and any(count < lessons.get(key, 0) for key, count in _shapes(tree))
