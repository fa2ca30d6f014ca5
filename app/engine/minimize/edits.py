"""Edits: the unit every pass proposes, addressed by a node's position in the current tree.

A pass never mutates the tree it is given. It proposes groups of `Edit`s, each naming a node by
its index in `ast.walk(tree)` order (identical on a deep copy) and what to put in its place:
another node, a list of statements (a splice), or `None` (delete). Edits on disjoint subtrees
commute, which is what lets the driver merge the winners of a parallel batch into one candidate.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Replacement = ast.AST | list[ast.stmt] | None
_BODY_FIELDS = ("body", "orelse", "finalbody")


@dataclass(frozen=True)
class Edit:
    """Replace node number `target` (in `ast.walk` order) by `replacement` (None deletes it)."""

    target: int
    replacement: Replacement = None


class NodeIndex:
    """The nodes of a tree in `ast.walk` order, with each node's number and parent.

    `failing_lines` are the lines of the program's own frames on the failing stack (outermost
    first) when the oracle reported them, else empty: what a pass may know about the run.
    """

    def __init__(self, tree: ast.AST, failing_lines: tuple[int, ...] = ()) -> None:
        self.failing_lines = failing_lines
        self.nodes: list[ast.AST] = list(ast.walk(tree))
        self._number = {id(node): i for i, node in enumerate(self.nodes)}
        self._parent: dict[int, ast.AST] = {}
        for node in self.nodes:
            for child in ast.iter_child_nodes(node):
                self._parent[id(child)] = node

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
        return {self._number[id(n)] for n in ast.walk(self.nodes[number])}


def delete(index: NodeIndex, nodes: Iterable[ast.AST]) -> list[Edit]:
    """Edits deleting `nodes` (statements, list elements, keywords...)."""
    return [Edit(index.number(node)) for node in nodes]


def replace(index: NodeIndex, node: ast.AST, replacement: Replacement) -> list[Edit]:
    return [Edit(index.number(node), replacement)]


class _Apply(ast.NodeTransformer):
    def __init__(self, replacements: dict[int, Replacement]) -> None:
        self.replacements = replacements

    def visit(self, node: ast.AST):  # type: ignore[override]
        key = id(node)
        if key in self.replacements:
            return copy.deepcopy(self.replacements[key])
        return self.generic_visit(node)


def apply_edits(tree: ast.Module, edits: Sequence[Edit]) -> ast.Module:
    """A new tree with `edits` applied to a copy of `tree` (nested edits: the outer one wins)."""
    new_tree = copy.deepcopy(tree)
    nodes = list(ast.walk(new_tree))
    replacements = {id(nodes[e.target]): e.replacement for e in edits}
    new_tree = _Apply(replacements).visit(new_tree)
    _fill_empty_bodies(new_tree)
    return ast.fix_missing_locations(new_tree)


def _fill_empty_bodies(tree: ast.AST) -> None:
    """A block emptied by deletions gets a `pass`; an emptied `try` loses its handlers' need."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and not node.handlers and not node.finalbody:
            node.finalbody = [ast.Pass()]
        for field in _BODY_FIELDS:
            body = getattr(node, field, None)
            if field == "body" and isinstance(body, list) and not body and not isinstance(node, ast.Module):
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
