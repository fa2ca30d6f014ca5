"""Keep what the failing statement needs, and nothing else: program slicing, in two candidates.

A person who has found the crashing line writes that line with its inputs, not the program
around it. Two candidates per failing line (innermost frame first):

- `hoist_failing_statement`: the imports (and the seeding calls, `seeds`) and that statement
  alone, at module level (`return e` becomes `e`; a compound statement keeps its header:
  `if x.item() > 1:` with `pass`). Once the inputs on the line are literal tensors
  (`simple_failing_inputs`), this is the whole repro. When the program compiles
  (`torch.compile`) and the statement runs inside a function, a second candidate keeps it
  compiled: the statement in a function decorated with the program's own `torch.compile(...)`
  keywords, called once (a graph break or a Dynamo error happens only while tracing: at
  module level the statement just runs);
- `slice_failing_statement`: for a statement at module level, the statements before it that
  (transitively) bind or touch the names it reads, in order, and nothing after it: the
  backward slice (C-Reduce reaches it statement by statement; this is one candidate).

Both only propose; the oracle decides (a `NameError` is another failure).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from app.engine.minimize.edits import Edit, NodeIndex
from app.engine.minimize.passes._ast import dotted
from app.engine.minimize.seeds import is_seed, seed_statements


def hoist_failing_statement(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """The imports (and the seed) plus the failing statement alone, for each failing line,
    innermost first."""
    imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))] + seed_statements(tree)
    compiler = _compile_decorator(tree)
    seen: set[int] = set()
    for line in reversed(index.failing_lines):
        statement = _statement_at(tree, line)
        if statement is None or id(statement) in seen or _hoisted_already(tree, statement):
            continue
        seen.add(id(statement))
        hoisted = _as_top_level(statement)
        if hoisted is not None:
            yield [Edit(0, ast.Module([*imports, hoisted], []))]
        in_function = not isinstance(index.scope(statement), ast.Module)
        if compiler is not None and in_function and not isinstance(statement, _NOT_A_BODY):
            yield [Edit(0, ast.Module([*imports, *_compiled(statement, compiler, imports)], []))]


def _hoisted_already(tree: ast.Module, statement: ast.stmt) -> bool:
    """The program is the imports, the seeds and `statement`: what the hoist would make."""
    return statement in tree.body and all(
        s is statement or isinstance(s, (ast.Import, ast.ImportFrom)) or is_seed(s) for s in tree.body)


def slice_failing_statement(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """A module-level failing statement with only the statements it depends on before it."""
    for line in reversed(index.failing_lines):
        statement = next((s for s in tree.body if s.lineno <= line <= (s.end_lineno or s.lineno)), None)
        if statement is None:
            continue
        position = tree.body.index(statement)
        needed = _reads(statement)
        kept: list[ast.stmt] = [statement]
        for earlier in reversed(tree.body[:position]):
            if isinstance(earlier, (ast.Import, ast.ImportFrom)) or is_seed(earlier) or _binds(earlier) & needed or (
                    not _binds(earlier) and _reads(earlier) & needed):
                kept.append(earlier)
                needed |= _reads(earlier)
        if len(kept) < len(tree.body):
            yield [Edit(0, ast.Module(list(reversed(kept)), []))]


_NOT_A_BODY = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Break, ast.Continue, ast.Global, ast.Nonlocal)


def _statement_at(tree: ast.Module, line: int) -> ast.stmt | None:
    found = None
    for node in ast.walk(tree):
        if (isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno)
                and (found is None or node.lineno >= found.lineno)):
            found = node
    return found


def _as_top_level(statement: ast.stmt) -> ast.stmt | None:
    if isinstance(statement, ast.Return):
        return ast.Expr(statement.value) if statement.value is not None else None
    if isinstance(statement, (ast.If, ast.While)):
        return type(statement)(statement.test, [ast.Pass()], [])
    if isinstance(statement, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
                              ast.AsyncFunctionDef, ast.ClassDef, ast.Break, ast.Continue, ast.Global,
                              ast.Nonlocal)):
        return None
    return statement


def _compile_decorator(tree: ast.Module) -> ast.expr | None:
    """`torch.compile(<the program's first compile's keywords>)`, or None if it does not compile."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and dotted(node.func) == "torch.compile":
            return ast.Call(node.func, [], node.keywords)
        if isinstance(node, ast.Attribute) and dotted(node) == "torch.compile":
            return node  # a bare `@torch.compile` (or `torch.compile` passed around)
    return None


def _compiled(statement: ast.stmt, compiler: ast.expr, imports: list[ast.stmt]) -> list[ast.stmt]:
    """`@compiler def f(): <statement>` then `f()`; a compound `if`/`while` keeps its header only."""
    taken = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)} | _binds_all(imports)
    name = next(n for n in ("f", "fn", "compiled", "_scrub_compiled_fn") if n not in taken)
    body = type(statement)(statement.test, [ast.Pass()], []) if isinstance(statement, (ast.If, ast.While)) \
        else statement
    function = ast.FunctionDef(name=name, args=ast.arguments([], [], None, [], [], None, []), body=[body],
                               decorator_list=[compiler], returns=None, type_comment=None, type_params=[])
    return [function, ast.Expr(ast.Call(ast.Name(name, ast.Load()), [], []))]


def _binds_all(statements: list[ast.stmt]) -> set[str]:
    return set().union(*(_binds(s) for s in statements)) if statements else set()


def _reads(statement: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _binds(statement: ast.stmt) -> set[str]:
    names = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names.add(statement.name)
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        names |= {(a.asname or a.name.split(".")[0]) for a in statement.names}
    return names
