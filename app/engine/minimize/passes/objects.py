"""Strategy 3 for helper objects: an instance made once becomes plain names.

A parity script often wraps its two computations in one class (`model.manual(x)`,
`model.fused(x)`) sharing a helper method; `classes_to_functions` needs a `forward`, and
`inline_functions` cannot reach methods. This pass flattens the object instead:

    class Attention(nn.Module):                       dim = 4
        def __init__(self, dim):                      qkv = nn.Linear(dim, 3 * dim)
            super().__init__()                        def split(x):
            self.qkv = nn.Linear(dim, 3 * dim)   ->        return qkv(x).chunk(3, -1)
        def split(self, x):                           def manual(x):
            return self.qkv(x).chunk(3, -1)                q, k, v = split(x)
        def manual(self, x):                               ...
            q, k, v = self.split(x)                   out = manual(x)
            ...
    model = Attention(4)
    out = model.manual(x)

`self.X` and `model.X` become `X`; the methods, now functions used once, are inlined by the
other passes. Only when it is plainly safe: a module-level class with methods only, `self`
read only as `self.X`, constructed once as `name = Class(...)` at module level, that name used
only as `name.X` or called (`name(x)` -> `forward(x)`, the method a call runs), and no clash
between the new names and the program's own.
"""

from __future__ import annotations

import ast
import copy
from collections import Counter
from collections.abc import Iterator

from app.engine.minimize.edits import Edit, NodeIndex
from app.engine.minimize.passes._ast import parameter_defaults
from app.engine.minimize.passes.modules import (
    _is_super_init,
    _self_only_as_attribute,
    _unself,
)


def instances_to_names(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """A class instantiated once as `obj = C(...)`: its attributes and methods become names."""
    everywhere: Counter[str] | None = None
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef) or cls.decorator_list:
            continue
        methods = _methods(cls)
        construction = _single_construction(tree, cls, index)
        if methods is None or construction is None:
            continue
        statement, call, name = construction
        uses = index.uses(name)
        called = _called_method(methods)
        calls = [use for use in uses if called and _called(use, index)]  # `obj(x)` -> `forward(x)`
        reads = [use for use in uses if use not in calls]
        if not all(_attribute_read(use, index) for use in reads):
            continue
        attributes = {index.parent(use).attr for use in reads}
        init_names = _init_attributes(methods.get("__init__")) | _init_parameters(methods.get("__init__"), call)
        new_names = set(methods) - {"__init__"} | init_names
        clashing = new_names - _same_values(methods.get("__init__"), call)
        everywhere = _names(tree) if everywhere is None else everywhere
        if not attributes <= new_names or _clashes(everywhere, cls, clashing, name) or _shadowed(methods, new_names):
            continue
        spliced = _flattened(methods, call)
        if spliced is None:
            continue
        edits = [Edit(index.number(cls)), Edit(index.number(statement), spliced)]
        edits += [Edit(index.number(index.parent(use)), ast.Name(index.parent(use).attr, ast.Load()))
                  for use in reads]
        edits += [Edit(index.number(use), ast.Name(called, ast.Load())) for use in calls]  # type: ignore[arg-type]
        yield edits


def _called_method(methods: dict[str, ast.FunctionDef] | None) -> str | None:
    """What `obj(x)` runs: its own `__call__`, else `forward` (what `nn.Module.__call__` runs)."""
    for name in ("__call__", "forward"):
        if methods and name in methods:
            return name
    return None


def _called(use: ast.Name, index: NodeIndex) -> bool:
    parent = index.parent(use)
    return isinstance(parent, ast.Call) and parent.func is use


def _methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef] | None:
    body = [s for s in cls.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    methods = {s.name: s for s in body if isinstance(s, ast.FunctionDef)}
    if len(methods) != len(body) or not methods:
        return None
    for method in methods.values():
        if method.decorator_list or not method.args.args or method.args.args[0].arg != "self":
            return None
        if not _self_only_as_attribute(method):
            return None
    return methods


def _single_construction(tree: ast.Module, cls: ast.ClassDef,
                         index: NodeIndex) -> tuple[ast.Assign, ast.Call, str] | None:
    """The one `name = C(...)` statement at module level, if `C` is used nowhere else."""
    if len(index.uses(cls.name)) != 1:
        return None
    for statement in tree.body:
        if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Call)
                and isinstance(statement.value.func, ast.Name) and statement.value.func.id == cls.name):
            name = statement.targets[0].id
            return (statement, statement.value, name) if index.stores(name) == 1 else None
    return None


def _attribute_read(use: ast.Name, index: NodeIndex) -> bool:
    parent = index.parent(use)
    return isinstance(parent, ast.Attribute) and parent.value is use and isinstance(parent.ctx, ast.Load)


def _init_parameters(init: ast.FunctionDef | None, call: ast.Call) -> set[str]:
    """`__init__`'s parameters, bound as names (but `C(dim)` for `dim` rebinds nothing)."""
    if init is None:
        return set()
    passed = {arg.arg: value for arg, value in zip(init.args.args[1:], call.args, strict=False)}
    passed.update((k.arg, k.value) for k in call.keywords if k.arg)
    return {a.arg for a in init.args.args[1:] + init.args.kwonlyargs
            if not (isinstance(passed.get(a.arg), ast.Name) and passed[a.arg].id == a.arg)}


def _shadowed(methods: dict[str, ast.FunctionDef], new_names: set[str]) -> bool:
    """A method binding one of the new names locally would read its own, not the object's."""
    for method in methods.values():
        local = {a.arg for a in method.args.args[1:] + method.args.kwonlyargs}
        local |= {n.id for n in ast.walk(method) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        if method.name != "__init__" and local & new_names:
            return True
    return False


def _same_values(init: ast.FunctionDef | None, call: ast.Call) -> set[str]:
    """Attributes that become a name already holding their value: `Attention(dim, heads)` with
    `self.heads = heads` flattens to `heads = heads` beside the program's own `heads`."""
    if init is None:
        return set()
    passed = {arg.arg: value for arg, value in zip(init.args.args[1:], call.args, strict=False)}
    passed.update((k.arg, k.value) for k in call.keywords if k.arg)
    same = {p for p, value in passed.items() if isinstance(value, ast.Name) and value.id == p}
    reassigned = {n.id for n in ast.walk(init) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    return {s.targets[0].attr for s in init.body  # type: ignore[attr-defined]
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Attribute)
            and isinstance(s.targets[0].value, ast.Name) and s.targets[0].value.id == "self"
            and isinstance(s.value, ast.Name) and s.value.id == s.targets[0].attr and s.value.id in same
            and s.value.id not in reassigned}


def _init_attributes(init: ast.FunctionDef | None) -> set[str]:
    if init is None:
        return set()
    attributes = {node.attr for node in ast.walk(init) if isinstance(node, ast.Attribute)
                  and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) and node.value.id == "self"}
    return attributes | {n.id for n in ast.walk(init) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _clashes(everywhere: Counter[str], cls: ast.ClassDef, new_names: set[str], instance: str) -> bool:
    """Does any name the program binds or reads outside the class collide with a new one?
    (`everywhere`: `_names` of the whole program, counted once per pass: linear work.)"""
    inside = _names(cls)
    return any(everywhere[name] > inside[name] for name in new_names - {instance})


def _names(tree: ast.AST) -> Counter[str]:
    """Names read or bound (`Name`s, definitions, parameters) in `tree`, with their counts."""
    found: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found[node.id] += 1
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found[node.name] += 1
        elif isinstance(node, ast.arg):
            found[node.arg] += 1
    return found


def _flattened(methods: dict[str, ast.FunctionDef], call: ast.Call) -> list[ast.stmt] | None:
    """`__init__`'s parameters bound to the call's arguments, its body, the methods as functions."""
    statements: list[ast.stmt] = []
    init = methods.get("__init__")
    if init is not None:
        args = init.args
        if args.vararg or args.kwarg or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        params = [a.arg for a in (args.posonlyargs + args.args)[1:]] + [a.arg for a in args.kwonlyargs]
        bound = parameter_defaults(args)
        if len(call.args) > len(params) - len(args.kwonlyargs):
            return None
        bound.update(zip(params, call.args))
        for keyword in call.keywords:
            if keyword.arg not in params:
                return None
            bound[keyword.arg] = keyword.value
        if any(param not in bound for param in params):
            return None
        statements += [ast.Assign([ast.Name(p, ast.Store())], copy.deepcopy(bound[p])) for p in params
                       if not (isinstance(bound[p], ast.Name) and bound[p].id == p)]
        statements += [_unself(s) for s in init.body if not _is_super_init(s)
                       and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    elif call.args or call.keywords:
        return None
    for method in methods.values():
        if method is not init:
            function = _unself(method)
            function.args.args = function.args.args[1:]
            statements.append(function)
    return statements or None
