"""Strategy 6 of the seed on the failing path: feed the failing call simple inputs directly.

A bug report computes the failing call's inputs through a data pipeline (a tokenizer, a
dataset, a loader). A hand-written repro writes `torch.tensor([1])` instead, and the pipeline
goes. This pass tries that: each variable argument of a call on a failing line is replaced by
a small tensor, and every definition that becomes unused goes in the same candidate (alone,
the replacement would make the program longer and the gate would refuse it).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator

from app.engine.minimize.checks import check_operands
from app.engine.minimize.edits import Edit, NodeIndex
from app.engine.minimize.parsing import parse
from app.engine.minimize.passes._ast import blocks, outermost

# Most to least likely to keep a bug, each as short as it can be spelled: an index, a float
# tensor of each common rank, two mismatched sizes (for shape errors, one operand at a time),
# float64 (numpy's default, the usual dtype mismatch), a larger index.
SIMPLE_INPUTS = tuple(
    parse(text, mode="eval").body
    for text in ("torch.tensor([1])", "torch.ones(1)", "torch.ones(1, 1)", "torch.ones(1, 1, 1)",
                 "torch.ones(1, 1, 1, 1)", "torch.ones(2)", "torch.ones(4)",
                 "torch.ones(1, dtype=torch.float64)", "torch.tensor([8])")
)


def simple_failing_inputs(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """Operands on failing lines (call arguments, both sides of `a + b`: names, attributes,
    subscripts and computed calls) -> small tensors, with what fed them."""
    if not _imports_torch(tree):
        return  # the inputs are spelled `torch.*`
    for line in reversed(index.failing_lines):  # innermost frame first
        if _at_a_check(tree, line):
            continue  # a check's sides replaced by constants lose what it compares: never kept
        for operand in _operands_on_line(tree, line):
            if isinstance(operand, (ast.Name, ast.Attribute, ast.Subscript)) or _computed(operand):
                yield from _feed(tree, index, operand)
                yield from _through_parameter(tree, index, operand)


def _through_parameter(tree: ast.Module, index: NodeIndex, operand: ast.expr) -> Iterator[list[Edit]]:
    """A computed operand inside a function called once -> the function's first parameter,
    fed a simple input where it is called: `if tok(idx).item() > 1` in a compiled `model(idx)`
    becomes `if idx.item() > 1` with `model(torch.ones(1))` (a value made inside the compiled
    function is not the data-dependent input the bug needs)."""
    function = index.scope(operand)
    if not isinstance(function, ast.FunctionDef) or isinstance(operand, ast.Name) or not function.args.args:
        return
    parameter = function.args.args[0].arg
    owner = index.scope(function)
    calls = [use for use in index.uses_in(function.name, owner)
             if isinstance(call := index.parent(use), ast.Call) and call.func is use and call.args]
    if len(calls) != 1 or index.stores_in(function.name, owner) != 1 or parameter == "self":
        return
    argument = index.parent(calls[0]).args[0]  # type: ignore[union-attr]
    dead = dead_statements(tree, [operand, argument], index)
    for value in SIMPLE_INPUTS:
        yield [Edit(index.number(operand), ast.Name(parameter, ast.Load())), Edit(index.number(argument), value),
               *(Edit(index.number(s)) for s in dead)]


def _at_a_check(tree: ast.Module, line: int) -> bool:
    return check_operands(tree, line) is not None


def _computed(operand: ast.expr) -> bool:
    """A call computing an operand (`self.shortcut(x)`, `torch.arange(ids.size(1))`), not
    already a literal tensor (`torch.ones(2)`): it may go, with what only it needed."""
    if not isinstance(operand, ast.Call):
        return False
    literal = all(isinstance(a, ast.Constant) or (isinstance(a, ast.List) and all(
        isinstance(e, ast.Constant) for e in a.elts)) for a in operand.args)
    return not literal


def _feed(tree: ast.Module, index: NodeIndex, argument: ast.expr) -> Iterator[list[Edit]]:
    loop = _loop_binding(index, argument)
    if loop is None:
        dead = dead_statements(tree, [argument], index)
        for value in SIMPLE_INPUTS:
            yield [Edit(index.number(argument), value), *(Edit(index.number(s)) for s in dead)]
        return
    # `for x in loader: f(x)` -> `f(torch.ones(1))`: the loop and what its iterable needed go.
    dead = dead_statements(tree, [loop.iter, loop.target], index)
    for value in SIMPLE_INPUTS:
        body = [copy.deepcopy(s, {id(argument): value}) for s in loop.body]
        yield [Edit(index.number(loop), body), *(Edit(index.number(s)) for s in dead)]


def _loop_binding(index: NodeIndex, argument: ast.expr) -> ast.For | None:
    """The enclosing `for` whose target binds `argument` (a plain name), if any."""
    if not isinstance(argument, ast.Name):
        return None
    node = index.parent(argument)
    while node is not None and not isinstance(node, (ast.FunctionDef, ast.Module)):
        if isinstance(node, ast.For) and any(isinstance(n, ast.Name) and n.id == argument.id
                                             for n in ast.walk(node.target)):
            return node
        node = index.parent(node)
    return None


def simple_loop_inputs(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """`for x, y in loader: body` -> `body` with `x`, `y` replaced by a small tensor.

    The loop, its iterable and whatever only fed the iterable (datasets, loaders) go together.
    """
    if not _imports_torch(tree):
        return
    for loop in (n for n in ast.walk(tree) if isinstance(n, ast.For)):
        targets = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
        uses = [n for s in loop.body for n in ast.walk(s)
                if isinstance(n, ast.Name) and n.id in targets and isinstance(n.ctx, ast.Load)]
        if not uses:
            continue
        dead = dead_statements(tree, [loop.iter, loop.target], index)
        for value in SIMPLE_INPUTS:
            memo = {id(use): value for use in uses}
            body = [copy.deepcopy(s, dict(memo)) for s in loop.body]
            yield [Edit(index.number(loop), body), *(Edit(index.number(s)) for s in dead)]


def _imports_torch(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.Import) and any(a.name == "torch" and not a.asname for a in n.names)
               for n in tree.body)


def dead_statements(tree: ast.Module, removed: list[ast.AST], index: NodeIndex | None = None) -> list[ast.stmt]:
    """Assignments and definitions left unused once the `removed` subtrees are gone, transitively.

    Only statements whose names were used before count: `loss = step()` nobody reads is the
    program's point, not dead code. Pass the tree's `index` to reuse its table of uses.
    """
    index = index or NodeIndex(tree)
    gone = {id(node) for root in removed for node in ast.walk(root)}
    candidates = [s for body in blocks(tree) for s in body
                  if isinstance(s, (ast.Assign, ast.FunctionDef, ast.ClassDef)) and id(s) not in gone
                  and _used_elsewhere(index, s)]
    candidates.reverse()  # users come after what they use: one sweep usually settles a chain
    dead: list[ast.stmt] = []
    changed = True
    while changed:
        changed = False
        for statement in candidates:
            if id(statement) in gone:
                continue
            names = _bound(statement)
            scope = index.scope(statement)
            if names and not any(id(use) not in gone and not index.inside(use, statement)
                                 for name in names for use in index.uses_in(name, scope)):
                dead.append(statement)
                gone.update(id(node) for node in ast.walk(statement))
                changed = True
    return outermost(dead, index)


def _used_elsewhere(index: NodeIndex, statement: ast.stmt) -> bool:
    scope = index.scope(statement)
    return any(not index.inside(use, statement) for name in _bound(statement) for use in index.uses_in(name, scope))


def _bound(statement: ast.stmt) -> list[str]:
    if isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
        return [statement.name]
    targets = statement.targets  # type: ignore[attr-defined]
    if all(isinstance(t, ast.Name) for t in targets):
        return [t.id for t in targets]
    return []


def _operands_on_line(tree: ast.Module, line: int) -> list[ast.expr]:
    """Call arguments, both sides of operators and comparisons, and the receivers of method
    calls (`tok(idx)` in `tok(idx).item() > 100`) on `line`; not an imported module (`torch`)."""
    modules = {alias.asname or alias.name.split(".")[0] for node in tree.body
               if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    operands: list[ast.expr] = []
    for node in ast.walk(tree):
        if not (isinstance(node, (ast.Call, ast.BinOp, ast.Compare))
                and node.lineno <= line <= (node.end_lineno or node.lineno)):
            continue
        if isinstance(node, ast.Call):
            operands += node.args
            if isinstance(node.func, ast.Attribute) and not _module_path(node.func.value, modules):
                operands.append(node.func.value)
        elif isinstance(node, ast.BinOp):
            operands += [node.left, node.right]
        else:
            operands += [node.left, *node.comparators]
    return operands


def _module_path(node: ast.expr, modules: set[str]) -> bool:
    """`torch`, `torch.nn.functional`: a chain of attributes on an imported module."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in modules
