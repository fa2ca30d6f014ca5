"""Candidates whose outcome is known without running them: a name left read but never bound.

Deleting statements one chunk at a time (ddmin) mostly deletes a binding (`model = Net()`,
`import re`, `def encode(...)`) while a statement reading the name stays: the candidate then
stops at a `NameError`, another failure, after a sandboxed run of its own. The gate refuses
those candidates up front: a name the current program binds somewhere and still reads in the
candidate, where the candidate binds it nowhere (any scope, any kind of binding).

Only names the current program binds count, so builtins and whatever the environment provides
(a name the program reads and never binds) are never in question. The check is conservative in
what it calls a binding (any store anywhere, `global`, `del`, parameters, imports, handlers,
patterns): a candidate is refused only if the name cannot be bound in it at all. It is a
prediction, not a proof (the read may sit in code the failure never reaches); a candidate that
`drop_definitions` proposes removes the readers with the binding and is not affected. Programs
that bind names dynamically (`globals()`, `exec`, `from m import *`, ...) are never filtered,
and neither is a program whose own failure is about an unbound name.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass

# Names and attributes through which a program can bind a name the AST does not show (`vars()`
# with no argument and `setattr` on anything but `self` too; `model.eval()` is no `eval`).
_DYNAMIC_NAMES = frozenset({"globals", "locals", "exec", "eval", "__builtins__", "builtins", "__import__"})
_DYNAMIC_ATTRIBUTES = frozenset({"__dict__", "__setattr__"})
_UNBOUND_FAILURE = ("is not defined", "referenced before assignment", "cannot access local variable",
                    "cannot access free variable", "has no attribute")


def bound_names(tree: ast.AST) -> set[str] | None:
    """Every name `tree` binds anywhere, or None if it may bind names dynamically."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id in _DYNAMIC_NAMES:
                return None
            if not isinstance(node.ctx, ast.Load):
                names.add(node.id)
        elif isinstance(node, (ast.Attribute, ast.Call)) and _binds_dynamically(node):
            return None
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    return None
                names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
        elif type(node).__name__ in ("TypeVar", "ParamSpec", "TypeVarTuple", "TypeAlias"):
            name = getattr(node, "name", None)
            names.add(name.id if isinstance(name, ast.Name) else str(name))
    return names


def _binds_dynamically(node: ast.Attribute | ast.Call) -> bool:
    if isinstance(node, ast.Attribute):  # `sys.modules[...]`, not `model.modules()`
        return node.attr in _DYNAMIC_ATTRIBUTES or node.attr == "modules" and (
            isinstance(node.value, ast.Name) and node.value.id == "sys")
    call = node
    name = call.func.id if isinstance(call.func, ast.Name) else None
    if name == "vars":
        return not call.args
    if name == "setattr":
        return not (call.args and isinstance(call.args[0], ast.Name) and call.args[0].id == "self")
    return False


def read_names(tree: ast.AST) -> set[str]:
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


def filter_applies(bound: set[str] | None, failing_message: str) -> bool:
    """Whether candidates of a program binding `bound` (None: dynamic), failing with
    `failing_message`, may be refused for an unbound name."""
    return bound is not None and not any(phrase in failing_message for phrase in _UNBOUND_FAILURE)


def newly_unbound(current_bound: set[str], candidate: ast.AST) -> set[str]:
    """Names the current program binds that `candidate` reads but binds nowhere."""
    candidate_bound = bound_names(candidate)
    if candidate_bound is None:
        return set()
    return (read_names(candidate) & current_bound) - candidate_bound


# Scopes a name is looked up through (innermost first). Class bodies and comprehensions count
# as enclosing scopes for what they contain: more lenient than Python (a method does not see its
# class's names), so a read this calls unresolved is one Python cannot resolve either.
_SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
           ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_ALWAYS_BOUND = frozenset(dir(builtins)) | {
    "__name__", "__file__", "__doc__", "__builtins__", "__spec__", "__loader__", "__package__",
    "__annotations__", "__class__", "__path__", "__cached__", "__debug__"}


@dataclass(frozen=True)
class Scan:
    """What one scope-aware walk of a program finds (`scan`)."""

    reads: frozenset[str]  # names read anywhere
    unresolved: frozenset[str]  # names read where no enclosing scope, the module or builtins bind them
    attributes_set: frozenset[str]  # attributes stored or deleted on anything (`obj.X = ...`)
    strings: frozenset[str]  # string constants (`setattr(m, "X", ...)`, `register_buffer("X", ...)`)
    self_read: frozenset[tuple[str, str]]  # (class, X) for `self.X` read in the class's own methods
    self_set: frozenset[tuple[str, str]]  # (class, X) for `self.X` set there


def scan(tree: ast.AST) -> Scan:
    """One walk: names read and those no scope binds, attributes set and `self.X` by class.

    Scope-aware where `newly_unbound` is not: `dim` read at module level after the loop binding
    it went, while `def check(dim)` still has a parameter of that name, is unresolved.
    """
    bindings: dict[int, set[str]] = {id(tree): set()}
    outer: dict[int, ast.AST | None] = {id(tree): None}
    reads: list[tuple[str, ast.AST]] = []
    attributes_set: set[str] = set()
    strings: set[str] = set()
    selves: set[tuple[str, str, bool]] = set()
    stack: list[tuple[ast.AST, ast.AST, str | None]] = [(tree, tree, None)]
    while stack:
        node, scope, cls = stack.pop()
        for child in ast.iter_child_nodes(node):
            inner, inner_cls = scope, cls
            if isinstance(child, _SCOPES):
                bindings[id(child)], outer[id(child)], inner = set(), scope, child
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    bindings[id(scope)].add(child.name)
                inner_cls = child.name if isinstance(child, ast.ClassDef) else cls
            if isinstance(child, ast.Attribute):
                stored = not isinstance(child.ctx, ast.Load)
                if stored:
                    attributes_set.add(child.attr)
                if cls is not None and isinstance(child.value, ast.Name) and child.value.id == "self":
                    selves.add((cls, child.attr, stored))
            elif isinstance(child, ast.Constant) and isinstance(child.value, str):
                strings.add(child.value)
            else:
                _bind(child, inner, bindings, outer, reads, tree)
            stack.append((child, inner, inner_cls))
    unresolved: set[str] = set()
    for name, scope in reads:
        current: ast.AST | None = scope
        while current is not None and name not in bindings[id(current)]:
            current = outer[id(current)]
        if current is None and name not in _ALWAYS_BOUND:
            unresolved.add(name)
    return Scan(frozenset(name for name, _ in reads), frozenset(unresolved), frozenset(attributes_set),
                frozenset(strings), frozenset((c, a) for c, a, stored in selves if not stored),
                frozenset((c, a) for c, a, stored in selves if stored))


def unresolved_names(tree: ast.AST) -> set[str] | None:
    """Names read where nothing binds them (a `NameError` when reached), or None if the program
    may bind names dynamically."""
    return None if bound_names(tree) is None else set(scan(tree).unresolved)


def _bind(node: ast.AST, scope: ast.AST, bindings: dict[int, set[str]], outer: dict[int, ast.AST | None],
          reads: list[tuple[str, ast.AST]], module: ast.AST) -> None:
    names: list[str] = []
    if isinstance(node, ast.Name):
        if isinstance(node.ctx, ast.Load):
            reads.append((node.id, scope))
        else:
            names.append(node.id)
    elif isinstance(node, ast.arg):
        names.append(node.arg)
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        names += [alias.asname or alias.name.split(".")[0] for alias in node.names]
    elif isinstance(node, ast.Global):
        bindings[id(module)].update(node.names)  # bound at module level by whoever runs it
        names += node.names
    elif isinstance(node, ast.Nonlocal):
        names += node.names
    elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
        names.append(node.name)
    elif isinstance(node, ast.MatchMapping) and node.rest:
        names.append(node.rest)
    elif type(node).__name__ in ("TypeVar", "ParamSpec", "TypeVarTuple"):
        names.append(str(getattr(node, "name", "")))
    bindings[id(scope)].update(names)
    while names and isinstance(scope, _COMPREHENSIONS):  # `(y := ...)` and loop variables: leak outward (lenient)
        scope = outer[id(scope)]  # type: ignore[assignment]
        bindings[id(scope)].update(names)


def newly_unresolved(current: set[str] | frozenset[str] | None, candidate: Scan) -> set[str]:
    """Names `candidate` reads where nothing binds them, that the current program (its
    `Scan.unresolved`; None: it may bind names dynamically) read only where something did."""
    return set() if current is None else set(candidate.unresolved - current)


# Attributes a library base class provides even when the program's own assignment goes.
_INHERITED = frozenset({"training"})


def assigned_attributes(tree: ast.AST) -> frozenset[tuple[str, str]]:
    """(class, attribute) for each attribute a class's methods set on `self`."""
    return scan(tree).self_set


def newly_unassigned(current: frozenset[tuple[str, str]], candidate: Scan, bound: set[str] | None) -> set[str]:
    """Attributes a class of the current program set on `self` that the same class of
    `candidate` reads as `self.X` but that can be set nowhere: no `obj.X = ...` on anything, no
    name `X` bound (`bound`: a method, a class attribute), no string `"X"` (`setattr`,
    `register_buffer`). An `AttributeError` when reached, not the failure. Per class: a
    subclass of a library layer reading `self.weight` it never set is not in question."""
    if bound is None:
        return set()
    read = {attr for cls, attr in candidate.self_read & current}
    return read - candidate.attributes_set - candidate.strings - bound - _INHERITED


@dataclass(frozen=True)
class Known:
    """What the current program binds: enough to refuse, unrun, a candidate that would stop at
    a `NameError` or an `AttributeError` on `self` (two walks of the candidate, not one per rule)."""

    bound: set[str]
    unresolved: frozenset[str]
    attributes: frozenset[tuple[str, str]]

    @classmethod
    def of(cls, tree: ast.AST, bound: set[str]) -> Known:
        found = scan(tree)
        return cls(bound, found.unresolved, found.self_set)

    def refuses(self, candidate: ast.AST) -> bool:
        bound = bound_names(candidate)
        if bound is None:
            return False
        found = scan(candidate)
        return bool((found.reads & self.bound) - bound or newly_unresolved(self.unresolved, found)
                    or newly_unassigned(self.attributes, found, bound))
