"""Strategy 2 of the seed, generically: drop statements and whole definitions."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from app.engine.minimize.edits import Edit, NodeIndex, delete
from app.engine.minimize.passes._ast import blocks, chunks, outermost


def cut_after_failure(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """Delete what runs after the failing statement: it is dead code once the error propagates.

    For every frame of the program on the failing stack, the statements following the failing
    one in its block and in each enclosing block (up to the function) go: all at once first,
    then frame by frame (a loop may have run them in earlier iterations; the oracle decides).
    """
    per_frame: list[list[ast.stmt]] = []
    for line in index.failing_lines:
        statement = _statement_at(tree, line)
        dead: list[ast.stmt] = []
        while statement is not None and not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = _block_of(index, statement)
            if body is not None:
                dead.extend(body[body.index(statement) + 1 :])
            parent = index.parent(statement)
            statement = parent if isinstance(parent, ast.stmt) else None
        if dead:
            per_frame.append(dead)
    everything = outermost([s for dead in per_frame for s in dead])
    if len(per_frame) > 1:
        yield delete(index, everything)
    for dead in per_frame:
        yield delete(index, dead)


def delete_statements(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """ddmin over every statement list: whole blocks, halves, quarters... single statements."""
    for body in blocks(tree):
        for chunk in chunks(body):
            yield delete(index, chunk)


def drop_definitions(tree: ast.Module, index: NodeIndex) -> Iterator[list[Edit]]:
    """Delete a binding statement (def, class, import, `x = ...`) and every statement using it.

    First every definition nobody uses, in one candidate; then each name with its uses.
    Removing `optimizer = SGD(...)` alone raises NameError at `optimizer.step()`; removing the
    definition together with its uses keeps the program meaningful, in one candidate.
    Linear in the program: the uses of every name come from one walk (`index.uses`).
    """
    statements = list(_binding_statements(tree))
    unused = [s for s in statements
              if not _is_import(s) and not any(index.uses_in(name, index.scope(s)) for name in _bound_names(s))]
    if len(unused) > 1:
        yield delete(index, outermost(unused, index))
    for stmt in statements:
        for name in _bound_names(stmt):
            users = [index.enclosing_statement(use) for use in index.uses_in(name, index.scope(stmt))]
            doomed = outermost([stmt, *[u for u in users if u is not None]], index)
            if any(s is stmt for s in doomed):
                yield delete(index, doomed)


def _binding_statements(tree: ast.Module) -> Iterator[ast.stmt]:
    for body in blocks(tree):
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import,
                                 ast.ImportFrom, ast.Assign, ast.AnnAssign)):
                yield stmt


def _is_import(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.Import, ast.ImportFrom))


def _bound_names(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name.split(".")[0]) for a in stmt.names if a.name != "*"]
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]  # type: ignore[attr-defined]
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _contains(outer: ast.AST, inner: ast.AST) -> bool:
    return any(node is inner for node in ast.walk(outer))


def _statement_at(tree: ast.Module, line: int) -> ast.stmt | None:
    """The innermost statement spanning `line`."""
    found = None
    for node in ast.walk(tree):  # outer statements come first
        spans = isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno)
        if spans and (found is None or _contains(found, node)):
            found = node
    return found


def _block_of(index: NodeIndex, statement: ast.stmt) -> list[ast.stmt] | None:
    parent = index.parent(statement)
    for field in ("body", "orelse", "finalbody", "handlers"):
        body = getattr(parent, field, None)
        if isinstance(body, list) and any(s is statement for s in body):
            return body
    return None
