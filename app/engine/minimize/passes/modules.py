"""Strategy 2 of the seed for models: shrink `nn.Module`s to the layers on the failing path."""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator

from app.engine.minimize.edits import Edit, NodeIndex, delete
from app.engine.minimize.passes._ast import chunks, outermost


def drop_submodules(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """Delete `self.X = ...` in a class with every statement of that class using `self.X`.

    ddmin over each class's attributes: all but what is needed, halves, ... one at a time.
    """
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        assigned: dict[str, list[ast.stmt]] = {}
        users: dict[str, list[ast.stmt]] = {}
        for node in ast.walk(cls):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if _self_attribute(target):
                        assigned.setdefault(target.attr, []).append(node)  # type: ignore[attr-defined]
            elif _self_attribute(node) and isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
                user = index.enclosing_statement(node)
                if user is not None:
                    users.setdefault(node.attr, []).append(user)  # type: ignore[attr-defined]
        doomed_by = {attr: [*definitions, *users.get(attr, [])] for attr, definitions in assigned.items()}
        for chunk in chunks(list(doomed_by)):
            yield delete(index, outermost([s for attr in chunk for s in doomed_by[attr]], index))


def drop_elements(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """ddmin over list/tuple displays and positional arguments (`nn.Sequential(a, b, c)`)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and not isinstance(node.ctx, ast.Store):
            items = node.elts
        elif isinstance(node, ast.Call):
            items = [a for a in node.args if not isinstance(a, ast.Starred)]
        else:
            continue
        for chunk in chunks(items):
            yield delete(index, chunk)


def classes_to_functions(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """A module class becomes a factory returning its `forward`: `M(args)(x)` still works.

        class M(nn.Module):                          def M(d):
            def __init__(self, d):                       lin = nn.Linear(d, d)
                super().__init__()            ->         def forward(x):
                self.lin = nn.Linear(d, d)                   return lin(x)
            def forward(self, x):                        return forward
                return self.lin(x)

    `self.X` becomes the local `X`. The factory, used once, is then inlined by the other passes,
    which is how "remove the class wrapper if a bare function suffices" happens. Classes that
    use `self` other than as `self.X`, or have class-level statements, are left alone.

    A class with only a constructor, every use of which reads one attribute (`Block().ln1`),
    becomes a function returning that attribute's value (`Block()`).
    """
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        function = _as_factory(cls)
        if function is not None:
            yield [Edit(index.number(cls), function)]
            continue
        read = _one_attribute_read(cls, index)
        function = _as_factory(cls, read[0].attr) if read else None
        if function is not None:
            yield [Edit(index.number(cls), function),
                   *(Edit(index.number(use), use.value) for use in read)]  # `Block().ln1` -> `Block()`


def _one_attribute_read(cls: ast.ClassDef, index: NodeIndex) -> list[ast.Attribute]:
    """Every use of `cls`, if each is `cls(...).attr` with the same `attr` (else [])."""
    reads: list[ast.Attribute] = []
    for use in index.uses(cls.name):
        if index.inside(use, cls):
            return []
        call = index.parent(use)
        read = index.parent(call) if isinstance(call, ast.Call) and call.func is use else None
        if not (isinstance(read, ast.Attribute) and isinstance(read.ctx, ast.Load)):
            return []
        reads.append(read)
    return reads if reads and len({r.attr for r in reads}) == 1 else []


def _as_factory(cls: ast.ClassDef, attribute: str | None = None) -> ast.FunctionDef | None:
    """`attribute`: the class has only a constructor, and the factory returns that attribute."""
    body = [s for s in cls.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    methods = {s.name: s for s in body if isinstance(s, ast.FunctionDef)}
    call = methods.get("forward") or methods.get("__call__")
    if attribute is not None and set(methods) == {"__init__"}:
        call = None
    elif call is None:
        return None
    if len(methods) != len(body) or cls.decorator_list:
        return None
    for method in methods.values():
        if not method.args.args or method.args.args[0].arg != "self" or not _self_only_as_attribute(method):
            return None
    init = methods.get("__init__")
    statements: list[ast.stmt] = []
    if init is not None:
        statements += [_unself(s) for s in init.body if not _is_super_init(s)]
    for name, method in methods.items():
        if method is not init:
            statements.append(_unself_method(method, "forward" if method is call else name))
    statements.append(ast.Return(ast.Name("forward" if call is not None else str(attribute), ast.Load())))
    arguments = copy.deepcopy(init.args) if init is not None else ast.arguments([], [], None, [], [], None, [])
    arguments.args = arguments.args[1:]
    return ast.FunctionDef(name=cls.name, args=arguments, body=statements, decorator_list=[], returns=None)


class _Unself(ast.NodeTransformer):
    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if _self_attribute(node):
            return ast.Name(node.attr, node.ctx)
        return self.generic_visit(node)


def _unself(statement: ast.stmt) -> ast.stmt:
    return _Unself().visit(copy.deepcopy(statement))


def _unself_method(method: ast.FunctionDef, name: str) -> ast.FunctionDef:
    new = _unself(method)
    new.name = name
    new.args.args = new.args.args[1:]
    return new


def _is_super_init(statement: ast.stmt) -> bool:
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr == "__init__"
            and isinstance(statement.value.func.value, ast.Call)
            and isinstance(statement.value.func.value.func, ast.Name)
            and statement.value.func.value.func.id == "super")


def _self_only_as_attribute(method: ast.FunctionDef) -> bool:
    """`self` is read only as `self.X` (or in `super().__init__()`)."""
    allowed: set[int] = set()
    for node in ast.walk(method):
        if _self_attribute(node):
            allowed.add(id(node.value))  # type: ignore[attr-defined]
    selfs = [n for n in ast.walk(method) if isinstance(n, ast.Name) and n.id == "self"]
    return all(id(n) in allowed for n in selfs)


def _self_attribute(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def bypass_layers(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """A layer skipped: every `self.key(x)` becomes `x` and `self.key = nn.Linear(...)` goes.

    `drop_submodules` deletes the statements that use a layer, which breaks a forward that
    uses it in the middle of an expression; a person makes the layer the identity instead.
    Also for a name bound to a constructed object (`tok = nn.Embedding(4, 2)`; `tok(idx)`).
    Only layers always called with one positional argument.
    """
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        assigned: dict[str, list[ast.stmt]] = {}
        loads: dict[str, list[ast.Attribute]] = {}
        for node in ast.walk(cls):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and _self_attribute(node.targets[0]):
                assigned.setdefault(node.targets[0].attr, []).append(node)  # type: ignore[attr-defined]
            elif _self_attribute(node) and isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
                loads.setdefault(node.attr, []).append(node)  # type: ignore[attr-defined]
        for attr, [statement] in ((a, s) for a, s in assigned.items() if len(s) == 1):
            edits = _bypassed(index, statement, loads.get(attr, []))
            if edits:
                yield edits
    for statement in (n for n in index.nodes if isinstance(n, ast.Assign)):
        target = statement.targets[0] if len(statement.targets) == 1 else None
        if isinstance(target, ast.Name) and isinstance(statement.value, ast.Call) \
                and index.stores_in(target.id, index.scope(statement)) == 1:
            edits = _bypassed(index, statement, index.uses_in(target.id, index.scope(statement)))
            if edits:
                yield edits


def _bypassed(index: NodeIndex, statement: ast.stmt, loads: list[ast.expr]) -> list[Edit] | None:
    constructed = statement.value  # type: ignore[attr-defined]
    if not isinstance(constructed, ast.Call):  # `self.eps = reference.eps`
        return None
    name = constructed.func.attr if isinstance(constructed.func, ast.Attribute) else getattr(constructed.func, "id", "")
    if not loads or not name[:1].isupper():  # a constructed object (`nn.Linear(...)`), not a call's result
        return None
    calls = [index.parent(load) for load in loads]
    if not all(isinstance(call, ast.Call) and call.func is load and len(call.args) == 1 and not call.keywords
               and not isinstance(call.args[0], ast.Starred) for call, load in zip(calls, loads)):
        return None
    return [Edit(index.number(statement)), *(Edit(index.number(call), call.args[0]) for call in calls)]  # type: ignore[union-attr]
