"""Edits: the unit every pass proposes, addressed by a node's position in the current tree.

A pass never mutates the tree it is given. It proposes groups of `Edit`s, each naming a node by
its index in `ast.walk(tree)` order (`NodeIndex`) and what to put in its place: another node,
a list of statements (a splice), or `None` (delete). Edits on disjoint subtrees commute, which is
what lets the driver merge the winners of a parallel batch into one candidate. Applying edits
copies only the paths down to the edited nodes (a candidate costs ~0.1 ms, not a deep copy).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Replacement = ast.AST | list[ast.stmt] | None
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)


@dataclass(frozen=True)
class Edit:
    """Replace node number `target` (in `ast.walk` order) by `replacement` (None deletes it)."""

    target: int
    replacement: Replacement = None


class NodeIndex:
    """The nodes of a tree in `ast.walk` order, with each node's number and parent.

    `failing_lines` are the lines of the program's own frames on the failing stack (outermost
    first) when the oracle reported them, else empty; `failing_message` the first line of the
    message it failed with: what a pass may know about the run.
    """

    def __init__(self, tree: ast.AST, failing_lines: tuple[int, ...] = (), failing_message: str = "") -> None:
        self.failing_lines = failing_lines
        self.failing_message = failing_message
        # `Load`/`Store`/`Del` are shared singletons in a parsed tree, never edit targets; left
        # out, so two disjoint subtrees never look overlapping through them.
        self.nodes: list[ast.AST] = [n for n in ast.walk(tree) if not isinstance(n, ast.expr_context)]
        self._number = {id(node): i for i, node in enumerate(self.nodes)}
        self._parent: dict[int, ast.AST] = {}
        for node in self.nodes:
            for child in ast.iter_child_nodes(node):
                self._parent[id(child)] = node
        self._uses: dict[str, list[ast.Name]] | None = None
        self._stores: dict[str, int] | None = None
        self._scope_locals: dict[int, dict[str, int]] = {}
        self._uses_by_scope: dict[str, dict[int, list[ast.Name]]] = {}

    def uses(self, name: str) -> list[ast.Name]:
        """Every read of `name` in the tree (`Name` nodes in a load context), in walk order.

        One walk for all names, made the first time a pass asks: a pass that looks up the
        uses of each definition stays linear in the program's size.
        """
        if self._uses is None:
            self._uses = {}
            for node in self.nodes:
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    self._uses.setdefault(node.id, []).append(node)
        return self._uses.get(name, [])

    def stores(self, name: str) -> int:
        """How many times the tree binds or deletes `name` (targets, `del`, `def`, `class`)."""
        if self._stores is None:
            self._stores = {}
            for node in self.nodes:
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                    self._stores[node.id] = self._stores.get(node.id, 0) + 1
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    self._stores[node.name] = self._stores.get(node.name, 0) + 1
        return self._stores.get(name, 0)

    def scope(self, node: ast.AST) -> ast.AST:
        """The function (or lambda, or the module) whose local names a name at `node` may be:
        the innermost one enclosing it (`node` itself for a definition's own body)."""
        current = self.parent(node)
        while current is not None and not isinstance(current, _SCOPES):
            current = self.parent(current)
        return current if current is not None else self.nodes[0]

    def resolves_to(self, use: ast.Name) -> ast.AST:
        """The scope whose binding of `use.id` the read `use` sees (Python's rule, simplified:
        enclosing functions that bind the name, else the module)."""
        scope = self.scope(use)
        while not isinstance(scope, ast.Module):
            if use.id in self._local_counts(scope):
                return scope
            scope = self.scope(scope)
        return scope

    def uses_in(self, name: str, scope: ast.AST) -> list[ast.Name]:
        """The reads of `name` that see `scope`'s binding of it (not a same-named local elsewhere).
        Every read of `name` is resolved once, the first time any scope asks about it."""
        if name not in self._uses_by_scope:
            by_scope: dict[int, list[ast.Name]] = {}
            for use in self.uses(name):
                by_scope.setdefault(id(self.resolves_to(use)), []).append(use)
            self._uses_by_scope[name] = by_scope
        return self._uses_by_scope[name].get(id(scope), [])

    def stores_in(self, name: str, scope: ast.AST) -> int:
        """How many times `scope` itself binds `name` (targets, `def`, `class`, parameters)."""
        return self._local_counts(scope).get(name, 0)

    def _local_counts(self, scope: ast.AST) -> dict[str, int]:
        key = id(scope)
        if key not in self._scope_locals:
            counts: dict[str, int] = {}
            if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                args = scope.args
                for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, *filter(None, [args.vararg, args.kwarg])]:
                    counts[arg.arg] = counts.get(arg.arg, 0) + 1
            body = scope.body if isinstance(scope.body, list) else [scope.body]  # type: ignore[attr-defined]
            pending: list[ast.AST] = list(body)
            declared: set[str] = set()
            while pending:
                node = pending.pop()
                if isinstance(node, (ast.Global, ast.Nonlocal)):
                    declared.update(node.names)
                elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                    counts[node.id] = counts.get(node.id, 0) + 1
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    counts[node.name] = counts.get(node.name, 0) + 1
                    pending.extend(node.decorator_list)  # evaluated here; the body is not
                    continue
                if not isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    pending.extend(ast.iter_child_nodes(node))
            self._scope_locals[key] = {n: c for n, c in counts.items() if n not in declared}
        return self._scope_locals[key]

    def inside(self, node: ast.AST, ancestor: ast.AST) -> bool:
        """Whether `ancestor` is `node` or one of its ancestors (a walk up, not down)."""
        current: ast.AST | None = node
        while current is not None:
            if current is ancestor:
                return True
            current = self.parent(current)
        return False

    def number(self, node: ast.AST) -> int:
        return self._number[id(node)]

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self._parent.get(id(node))

    def enclosing_statement(self, node: ast.AST) -> ast.stmt | None:
        """The innermost statement containing `node` (the node itself if it is one)."""
        current: ast.AST | None = node
        while current is not None and not isinstance(current, ast.stmt):
            current = self.parent(current)
        return current

    def subtree(self, number: int) -> set[int]:
        return {self._number[id(n)] for n in ast.walk(self.nodes[number]) if not isinstance(n, ast.expr_context)}


def delete(index: NodeIndex, nodes: Iterable[ast.AST]) -> list[Edit]:
    """Edits deleting `nodes` (statements, list elements, keywords...)."""
    return [Edit(index.number(node)) for node in nodes]


def replace(index: NodeIndex, node: ast.AST, replacement: Replacement) -> list[Edit]:
    return [Edit(index.number(node), replacement)]


def apply_edits(tree: ast.Module, edits: Sequence[Edit], index: NodeIndex | None = None) -> ast.Module:
    """A new tree with `edits` applied (nested edits: the outer one wins); `tree` is unchanged.

    Path copying: only the nodes from the root down to an edited node are copied; every other
    subtree is shared with `tree` (read it, never mutate it). The replacements are deep copies.
    Pass `tree`'s `index` to skip re-indexing it.
    """
    index = index or NodeIndex(tree)
    replacements = {id(index.nodes[e.target]): e.replacement for e in edits}
    if id(tree) in replacements:
        return _fresh_copy(replacements[id(tree)])  # type: ignore[return-value]
    on_path: set[int] = set()
    for edit in edits:
        node = index.parent(index.nodes[edit.target])
        while node is not None and id(node) not in on_path:
            on_path.add(id(node))
            node = index.parent(node)
    return _rebuild(tree, replacements, on_path)  # type: ignore[return-value]


def _rebuild(node: ast.AST, replacements: dict[int, Replacement], on_path: set[int]) -> ast.AST:
    """`node` itself if no edit lies below it, else a shallow copy with its children rebuilt."""
    if id(node) not in on_path:
        return node

    def child(value: object) -> object:
        if not isinstance(value, ast.AST):
            return value
        if id(value) in replacements:
            return _fresh_copy(replacements[id(value)])
        return _rebuild(value, replacements, on_path)

    new = copy.copy(node)
    for name, value in ast.iter_fields(node):
        if isinstance(value, list):
            items: list = []
            for item in map(child, value):
                if isinstance(item, list):
                    items.extend(item)  # a statement spliced in
                elif item is not None:  # (None: deleted)
                    items.append(item)
            setattr(new, name, items)
        else:
            setattr(new, name, child(value))
    _fill_empty_body(new)
    return new


def _fresh_copy(replacement: Replacement) -> Replacement:
    fresh = copy.deepcopy(replacement)
    for node in fresh if isinstance(fresh, list) else [fresh] if fresh is not None else []:
        ast.fix_missing_locations(node)
    return fresh


def _fill_empty_body(node: ast.AST) -> None:
    """A block emptied by deletions gets a `pass`; an emptied `try` gets a `finally: pass`."""
    if isinstance(node, ast.Try) and not node.handlers and not node.finalbody:
        node.finalbody = [ast.Pass()]
    body = getattr(node, "body", None)
    if isinstance(body, list) and not body and not isinstance(node, ast.Module):
        body.append(ast.Pass())


def mergeable(index: NodeIndex, groups: Sequence[Sequence[Edit]]) -> list[Edit] | None:
    """The union of edit groups if no edit lies inside another's target; otherwise None."""
    merged: list[Edit] = []
    covered: set[int] = set()
    for group in groups:
        for edit in group:
            subtree = index.subtree(edit.target)
            if subtree & covered:
                return None
            covered |= subtree
            merged.append(edit)
    return merged
