"""Strategy 6 of the seed: simplify the computation."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from app.engine.minimize.edits import Edit, NodeIndex
from app.engine.minimize.passes._ast import loaded_names, parameter_defaults


def drop_keyword_args(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """Drop keyword arguments of a call: all of them at once, then one at a time."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.keywords:
            if len(node.keywords) > 1:
                yield [Edit(index.number(k)) for k in node.keywords]
            for keyword in node.keywords:
                yield [Edit(index.number(keyword))]


def drop_unused_parameters(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """A parameter the function never reads goes, with what every call passes for it.

    `def f(a, b): return a` / `f(x, y)` -> `def f(a): return a` / `f(x)`. A class's
    `__init__` counts for calls of the class. All unused parameters of a function first, then
    one at a time. Functions with `*args`/`**kwargs`, or a call that unpacks `*xs`, are left.
    """
    for definition, name, skip in _named_callables(tree, index):
        args = definition.args
        if args.vararg or args.kwarg or args.posonlyargs:
            continue
        params = args.args[skip:]
        read = loaded_names(ast.Module(definition.body, []))
        unused = [p.arg for p in params if p.arg not in read]
        calls = [call for use in index.uses(name) if isinstance(call := index.parent(use), ast.Call)
                 and call.func is use]
        if not unused or any(isinstance(a, ast.Starred) for c in calls for a in c.args):
            continue
        for dropped in ([unused] if len(unused) > 1 else []) + [[p] for p in unused]:
            yield _drop_parameters(index, definition, skip, set(dropped), calls)


def _named_callables(tree: ast.Module, index: NodeIndex) -> Iterator[tuple[ast.FunctionDef, str, int]]:
    """(definition, the name calls use, leading parameters calls do not pass: `self`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__" and item.args.args:
                    yield item, node.name, 1
        elif isinstance(node, ast.FunctionDef) and not isinstance(index.parent(node), ast.ClassDef):
            yield node, node.name, 0  # (a method is called through an object: not by its name)


def _drop_parameters(index: NodeIndex, definition: ast.FunctionDef, skip: int, dropped: set[str],
                     calls: list[ast.Call]) -> list[Edit]:
    args = definition.args
    defaults = parameter_defaults(args)
    kept = [a for a in args.args if a.arg not in dropped]  # defaulted ones stay a suffix
    new_args = ast.arguments(
        posonlyargs=[], args=kept, vararg=None, kwonlyargs=args.kwonlyargs, kw_defaults=args.kw_defaults,
        kwarg=None, defaults=[defaults[a.arg] for a in kept if a.arg in defaults],
    )
    edits = [Edit(index.number(args), new_args)]
    positions = {i for i, a in enumerate(args.args[skip:]) if a.arg in dropped}
    for call in calls:
        edits += [Edit(index.number(a)) for i, a in enumerate(call.args) if i in positions]
        edits += [Edit(index.number(k)) for k in call.keywords if k.arg in dropped]
    return edits


def replace_with_subexpression(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """Replace an expression by one of its parts: `f(a, b)` -> `a`, `x.m(y)` -> `x`, `a + b` -> `a`.

    Larger expressions first, since replacing them removes the most. A part that names an
    imported module or what an import bound (`torch` of `torch.ones(1)`, `nn.functional` of
    `nn.functional.mse_loss(...)`) is never offered: a namespace in place of a value is a
    `TypeError` ('module' object is not callable), one sandboxed run wasted per call.
    """
    sizes = subtree_sizes(index)
    imported = _imported_names(index)
    parts = {id(n): [p for p in _parts(n) if not _in_namespace(p, imported, index)]
             for n in index.nodes if isinstance(n, ast.expr)}
    expressions = [n for n in index.nodes if isinstance(n, ast.expr) and parts[id(n)]]
    expressions.sort(key=lambda n: -sizes[id(n)])
    for node in expressions:
        for part in parts[id(node)]:
            yield [Edit(index.number(node), part)]


def _imported_names(index: NodeIndex) -> set[str]:
    """Names only `import` statements bind (never assigned): modules, or what was imported."""
    names = {alias.asname or alias.name.split(".")[0] for node in index.nodes
             if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    return {name for name in names if not index.stores(name)}


def _in_namespace(part: ast.expr, imported: set[str], index: NodeIndex) -> bool:
    """`torch` (a name an import bound), or `nn.functional` read as a namespace (the receiver
    of `.mse_loss`): attributes off an imported name where an attribute is read off them."""
    root = part
    while isinstance(root, ast.Attribute):
        root = root.value
    if not (isinstance(root, ast.Name) and root.id in imported):
        return False
    parent = index.parent(part)
    return part is root or (isinstance(parent, ast.Attribute) and parent.value is part)


def subtree_sizes(index: NodeIndex) -> dict[int, int]:
    """Nodes under each node (itself included), for every node of the tree: one pass, children
    before parents (`ast.walk` order reversed)."""
    sizes: dict[int, int] = {}
    for node in reversed(index.nodes):
        sizes[id(node)] = 1 + sum(sizes.get(id(child), 0) for child in ast.iter_child_nodes(node))
    return sizes


def _parts(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.Call) and any(isinstance(a, ast.Starred) and isinstance(a.value, (ast.List, ast.Tuple))
                                          for a in node.args):
        # `nn.Sequential(*[block])` -> `nn.Sequential(block)`: a display unpacked in place
        spliced = [e for a in node.args for e in (a.value.elts if isinstance(a, ast.Starred)  # type: ignore[attr-defined]
                   and isinstance(a.value, (ast.List, ast.Tuple)) else [a])]
        return [ast.Call(node.func, spliced, node.keywords), *_parts(ast.Call(node.func, spliced, node.keywords))]
    if _literal_tensor(node):
        return [node.args[0].elts[0] if isinstance(node.args[0], ast.List) else node.args[0]]  # type: ignore[attr-defined]
    if isinstance(node, ast.Call):
        receiver = [node.func.value] if isinstance(node.func, ast.Attribute) else []
        arguments = [a for a in node.args if not isinstance(a, ast.Starred)]
        return arguments + [k.value for k in node.keywords if k.arg] + receiver
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse]
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        # `[f(t) for t in (q, k, v)]` -> `(q, k, v)` (what it maps over), or `[f(t)]`
        iterable = [node.generators[0].iter] if len(node.generators) == 1 else []
        return [*iterable, ast.List([node.elt], ast.Load())]
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        element = _literal_element(node)
        return [node.value] if element is None else [element, node.value]
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and not isinstance(node.value, ast.Name):
        return [node.value]
    return []


def _literal_tensor(node: ast.expr) -> bool:
    """`torch.tensor([1])`, `torch.tensor(2.0)`: a one-value tensor, which may become the number
    (`nn.Linear(1, torch.tensor([1]))` -> `nn.Linear(1, 1)`)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "tensor"
            and len(node.args) == 1 and not node.keywords):
        return False
    value = node.args[0]
    if isinstance(value, ast.List) and len(value.elts) == 1:
        value = value.elts[0]
    return isinstance(value, ast.Constant) and isinstance(value.value, (int, float))


def _literal_element(node: ast.Subscript) -> ast.expr | None:
    """`[a, b][1]` -> `b`: indexing a list or tuple display with a constant."""
    if not isinstance(node.value, (ast.List, ast.Tuple)) or not isinstance(node.slice, ast.Constant):
        return None
    position = node.slice.value
    elements = node.value.elts
    if isinstance(position, int) and -len(elements) <= position < len(elements):
        element = elements[position]
        return None if isinstance(element, ast.Starred) else element
    return None


def unpack_to_one_value(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """`q, k, v = split(qkv(x))` -> `q = k = v = x`: every target one value the expression read.

    C-Reduce replaces a variable by another variable; for an unpacking that is the way to
    shapes a person would pick (`q = k = v`), where replacing the expression by one of its parts
    (`q, k, v = x`) only unpacks the wrong thing.
    """
    for node in index.nodes:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple)):
            continue
        targets = node.targets[0].elts
        if not targets or not all(isinstance(t, ast.Name) for t in targets):
            continue
        read = dict.fromkeys(n.id for n in ast.walk(node.value) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
        for name in read:
            names = [ast.Name(t.id, ast.Store()) for t in targets]  # type: ignore[attr-defined]
            yield [Edit(index.number(node), ast.Assign(names, ast.Name(name, ast.Load())))]
