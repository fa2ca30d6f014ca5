"""Strategy 3 of the seed and the finishing touches: unwrap and inline what is used once."""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from itertools import pairwise

from app.engine.minimize.edits import Edit, NodeIndex
from app.engine.minimize.passes._ast import blocks, parameter_defaults


def unwrap_main_guard(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """`if __name__ == "__main__": body` -> `body` at top level."""
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and "__name__" in ast.unparse(stmt.test):
            yield [Edit(index.number(stmt), stmt.body)]


def drop_decorators(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """`@torch.no_grad()`, `@functools.wraps`... on a definition: each goes, one at a time.

    A decorator the bug needs (`@torch.compile(fullgraph=True)`) stays: the oracle says so.
    Without decorators, a function can be inlined.
    """
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for decorator in node.decorator_list:
                yield [Edit(index.number(decorator))]


def inline_functions(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """A function called once, as `f(...)` or `x = f(...)`, is replaced by its body at the call.

    Parameters become assignments (`param = argument`, or the default), a final `return e`
    becomes `x = e`; functions with other `return`s, `yield`, or `*args` are left alone.
    """
    for body in blocks(tree):
        for definition in body:
            if not isinstance(definition, ast.FunctionDef) or not _inlinable(definition):
                continue
            uses = _sole_binding_uses(index, definition, definition.name)
            if len(uses) != 1:
                continue
            call = index.parent(uses[0])
            statement = index.parent(call) if isinstance(call, ast.Call) else None
            if not isinstance(call, ast.Call) or call.func is not uses[0] or statement is None:
                continue
            if any(node is statement for node in ast.walk(definition)):
                continue  # recursive
            inlined = _inline(definition, call, statement)
            if inlined is not None:
                yield [Edit(index.number(definition)), Edit(index.number(statement), inlined)]


def inline_expressions(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """`def f(a, b): return E`, called once anywhere: the call becomes `E` with the arguments
    (or defaults) in place of the parameters. Covers calls inside expressions, which
    `inline_functions` (statements only) cannot reach: `assert close(f(x), g(x))`.

    A factory whose only statements define and return such a function (a module made a
    function), called once as `F(a)(b)`, becomes the inner expression with both calls' arguments
    in place (the inner parameters shadow the outer ones).
    """
    for definition in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        inner = _expression_factory(definition)
        returned = _returned_expression(inner or definition)
        if returned is None or not _plain(definition) or (inner is not None and not _plain(inner)):
            continue
        uses = _sole_binding_uses(index, definition, definition.name)
        call = index.parent(uses[0]) if len(uses) == 1 else None
        if not isinstance(call, ast.Call) or call.func is not uses[0]:
            continue
        bindings = _arguments(definition, call)
        if inner is not None:  # `F(a)(b)`: the outer call is the one replaced
            outer = index.parent(call)
            inner_bindings = _arguments(inner, outer) if isinstance(outer, ast.Call) and outer.func is call else None
            bindings = None if bindings is None or inner_bindings is None else {**bindings, **inner_bindings}
            call = outer
        if any(node is call for node in ast.walk(definition)):
            continue  # recursive
        if bindings is not None:
            expression = Substitute(bindings).visit(copy.deepcopy(returned))
            yield [Edit(index.number(definition)), Edit(index.number(call), expression)]


def _returned_expression(definition: ast.FunctionDef) -> ast.expr | None:
    body = [s for s in definition.body if not _is_docstring(s)]
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return None
    return body[0].value


def _expression_factory(definition: ast.FunctionDef) -> ast.FunctionDef | None:
    """The inner function of `def F(...): def g(...): return E; return g`, else None."""
    body = [s for s in definition.body if not _is_docstring(s)]
    if len(body) == 2 and isinstance(body[0], ast.FunctionDef) and isinstance(body[1], ast.Return) \
            and isinstance(body[1].value, ast.Name) and body[1].value.id == body[0].name:
        return body[0]
    return None


def _plain(definition: ast.FunctionDef) -> bool:
    return not (definition.decorator_list or definition.args.vararg or definition.args.kwarg)


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
        and isinstance(statement.value.value, str)


def _arguments(definition: ast.FunctionDef, call: ast.Call) -> dict[str, ast.expr] | None:
    """Parameter -> the expression the call gives it (or its default); None if unmatched."""
    args = definition.args
    params = [a.arg for a in args.posonlyargs + args.args]
    bound = parameter_defaults(args)
    if len(call.args) > len(params) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    bound.update(zip(params, call.args))
    names = params + [a.arg for a in args.kwonlyargs]
    for keyword in call.keywords:
        if keyword.arg not in names:  # (`**kwargs` has no arg)
            return None
        bound[keyword.arg] = keyword.value
    if any(bound.get(name) is None for name in names):
        return None
    return bound


class Substitute(ast.NodeTransformer):
    """Read names -> (copies of) the expressions they stand for (a parameter's argument, a
    loop variable's item)."""

    def __init__(self, bindings: dict[str, ast.expr]) -> None:
        self.bindings = bindings

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if isinstance(node.ctx, ast.Load) and node.id in self.bindings:
            return copy.deepcopy(self.bindings[node.id])
        return node


def inline_factories(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """`y = F(a)(x)` where `F` defines `g` and returns it (a module made a function) -> inlined.

    `F`'s parameters and body come first, then `g`'s parameters and body; `F` goes.
    """
    for definition in tree.body:
        if not isinstance(definition, ast.FunctionDef) or not _inlinable(definition):
            continue
        inner = _returned_function(definition)
        uses = _sole_binding_uses(index, definition, definition.name)
        if inner is None or not _inlinable(inner) or len(uses) != 1:
            continue
        factory_call = index.parent(uses[0])
        call = index.parent(factory_call) if isinstance(factory_call, ast.Call) else None
        statement = index.parent(call) if isinstance(call, ast.Call) else None
        if not isinstance(call, ast.Call) or call.func is not factory_call or statement is None:
            continue
        setup = _inline(_without(definition, inner), factory_call, ast.Expr(factory_call))
        body = _inline(inner, call, statement)
        if setup is not None and body is not None:
            yield [Edit(index.number(definition)), Edit(index.number(statement), [*setup, *body])]


def _returned_function(definition: ast.FunctionDef) -> ast.FunctionDef | None:
    last = definition.body[-1]
    if not (isinstance(last, ast.Return) and isinstance(last.value, ast.Name)):
        return None
    inner = [s for s in definition.body if isinstance(s, ast.FunctionDef) and s.name == last.value.id]
    return inner[-1] if inner else None


def _without(definition: ast.FunctionDef, inner: ast.FunctionDef) -> ast.FunctionDef:
    """`definition` minus the inner function and the `return` of it."""
    body = [s for s in definition.body[:-1] if s is not inner] or [ast.Pass()]
    return ast.FunctionDef(name=definition.name, args=definition.args, body=body, decorator_list=[], returns=None)


def inline_variables(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """`x = expr` followed by exactly one read of `x` (and no other write): substitute `expr`.

    `a, b = (x, y)` (a display unpacked name by name) first becomes `a = x` and `b = y`, which
    this pass then inlines one by one (`dim, seq = (1, 1)` -> `AttentionPool(1)`, `randn(1)`).
    """
    for body in blocks(tree):
        for stmt in body:
            split = _split_unpacking(stmt)
            if split:
                yield [Edit(index.number(stmt), split)]
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)):
                continue
            name = stmt.targets[0].id
            uses = _sole_binding_uses(index, stmt, name)
            if len(uses) == 1:
                yield [Edit(index.number(stmt)), Edit(index.number(uses[0]), stmt.value)]


def _split_unpacking(stmt: ast.stmt) -> list[ast.stmt]:
    """`a, b = (x, y)` -> `a = x`, `b = y`, when no value reads a target (`a, b = b, a` swaps)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], (ast.Tuple, ast.List))
            and isinstance(stmt.value, (ast.Tuple, ast.List))):
        return []
    targets, values = stmt.targets[0].elts, stmt.value.elts
    if len(targets) != len(values) or not all(isinstance(t, ast.Name) for t in targets) \
            or any(isinstance(v, ast.Starred) for v in values):
        return []
    names = {t.id for t in targets}  # type: ignore[attr-defined]
    if any(isinstance(n, ast.Name) and n.id in names for v in values for n in ast.walk(v)):
        return []
    return [ast.Assign([ast.Name(t.id, ast.Store())], v) for t, v in zip(targets, values)]  # type: ignore[attr-defined]


def _sole_binding_uses(index: NodeIndex, statement: ast.stmt, name: str) -> list[ast.Name]:
    """The reads of `name` that see `statement`'s binding, if it is the only one in its scope
    (a same-named parameter or local of another function is another variable); else []."""
    scope = index.scope(statement)
    return index.uses_in(name, scope) if index.stores_in(name, scope) == 1 else []


def _inlinable(definition: ast.FunctionDef) -> bool:
    args = definition.args
    if args.vararg or args.kwarg or args.posonlyargs or args.kwonlyargs or definition.decorator_list:
        return False
    own = list(_own_nodes(definition))
    returns = [n for n in own if isinstance(n, ast.Return)]
    nested = [n for n in own if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Nonlocal, ast.Global))]
    last = definition.body[-1]
    return not nested and (not returns or (len(returns) == 1 and returns[0] is last))


def _own_nodes(function: ast.FunctionDef) -> Iterator[ast.AST]:
    """The nodes of `function`'s body, not descending into nested functions or classes."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _inline(definition: ast.FunctionDef, call: ast.Call, statement: ast.AST) -> list[ast.stmt] | None:
    bound = _arguments(definition, call)
    if bound is None:
        return None
    bindings = [ast.Assign([ast.Name(a.arg, ast.Store())], bound[a.arg]) for a in definition.args.args]
    body = list(definition.body)
    result = body.pop() if isinstance(body[-1], ast.Return) else None
    if isinstance(statement, ast.Expr) and statement.value is call:
        tail = [ast.Expr(result.value)] if result is not None and result.value is not None else []
    elif isinstance(statement, ast.Return) and statement.value is call:
        tail = [ast.Return(result.value if result is not None else None)]
    elif isinstance(statement, ast.Assign) and statement.value is call:
        value = result.value if result is not None and result.value is not None else ast.Constant(None)
        tail = [ast.Assign(statement.targets, value)]
    else:
        return None
    return [*bindings, *body, *tail] or [ast.Pass()]


def merge_reassignments(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """`x = a` directly followed by `x = f(x)` (or `x += b`): one statement, `x = f(a)`.

    The first binding's only reader is the statement that replaces it (`model = forward` then
    `model = torch.compile(model)`): `inline_variables` cannot see that, the name is bound twice.
    """
    for body in blocks(tree):
        for first, second in pairwise(body):
            name = _assigned_name(first)
            if name is None:
                continue
            if isinstance(second, ast.AugAssign) and isinstance(second.target, ast.Name) and second.target.id == name:
                # `layers = []` then `layers += [block]` -> `layers = [] + [block]`
                merged = ast.Assign([ast.Name(name, ast.Store())], ast.BinOp(first.value, second.op, second.value))  # type: ignore[attr-defined]
                yield [Edit(index.number(first)), Edit(index.number(second), merged)]
                continue
            if _assigned_name(second) != name:
                continue
            reads = [n for n in ast.walk(second.value) if isinstance(n, ast.Name) and n.id == name]  # type: ignore[attr-defined]
            if len(reads) == 1 and not any(isinstance(n, (ast.Lambda, ast.comprehension))
                                           for n in ast.walk(second.value)):  # type: ignore[attr-defined]
                yield [Edit(index.number(first)), Edit(index.number(reads[0]), first.value)]  # type: ignore[attr-defined]


def calls_to_decorators(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """`def f(...)` and later `g = wrap(f, ...)`, `f` used nowhere else -> `@wrap(...)` on the
    definition, renamed `g`: `model = torch.compile(forward, fullgraph=True)` becomes
    `@torch.compile(fullgraph=True)` over `def model`."""
    for body in blocks(tree):
        for position, definition in enumerate(body):
            if not isinstance(definition, ast.FunctionDef):
                continue
            scope = index.scope(definition)
            uses = index.uses_in(definition.name, scope) if index.stores_in(definition.name, scope) == 1 else []
            if len(uses) != 1:
                continue
            call = index.parent(uses[0])
            statement = index.parent(call) if isinstance(call, ast.Call) else None
            if not (isinstance(call, ast.Call) and call.args and call.args[0] is uses[0] and statement in body[position:]):
                continue
            target = _assigned_name(statement)  # type: ignore[arg-type]
            if target is None or statement.value is not call or index.stores_in(target, scope) != 1:  # type: ignore[union-attr]
                continue
            rest = call.args[1:]
            decorator = ast.Call(call.func, rest, call.keywords) if rest or call.keywords else call.func
            renamed = copy.copy(definition)
            renamed.name, renamed.decorator_list = target, [decorator, *definition.decorator_list]
            yield [Edit(index.number(definition), renamed), Edit(index.number(statement))]  # type: ignore[arg-type]


def _assigned_name(statement: ast.stmt) -> str | None:
    if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)):
        return statement.targets[0].id
    return None
