"""Edits applied by path copying: the original tree never changes, untouched subtrees are shared."""

from __future__ import annotations

import ast

from app.engine.minimize.edits import Edit, NodeIndex, apply_edits, mergeable

SOURCE = "def f(x):\n    a = g(x)\n    return a\nif c:\n    h()\nelse:\n    k()\ny = f(1) + 2\n"


def edit_of(index: NodeIndex, node: ast.AST, replacement=None) -> Edit:
    return Edit(index.number(node), replacement)


def test_delete_splice_and_replace_leave_the_original_untouched():
    tree = ast.parse(SOURCE)
    index = NodeIndex(tree)
    function, branch, assign = tree.body
    edits = [
        edit_of(index, function.body[0]),  # delete `a = g(x)`
        edit_of(index, branch, branch.body),  # `if c: h() else: k()` -> `h()`
        edit_of(index, assign.value, assign.value.left),  # `f(1) + 2` -> `f(1)`
    ]
    result = apply_edits(tree, edits, index)
    assert ast.unparse(result) == "def f(x):\n    return a\nh()\ny = f(1)"
    assert ast.unparse(tree) == ast.unparse(ast.parse(SOURCE))  # unchanged


def test_untouched_subtrees_are_shared_and_edited_paths_are_copies():
    tree = ast.parse(SOURCE)
    index = NodeIndex(tree)
    function, branch, assign = tree.body
    result = apply_edits(tree, [edit_of(index, assign.value, assign.value.left)], index)
    assert result is not tree and result.body[2] is not assign
    assert result.body[0] is function and result.body[1] is branch
    assert result.body[2].value is not assign.value.left  # the replacement is a copy


def test_a_block_emptied_by_deletion_gets_pass_and_the_outer_edit_wins():
    tree = ast.parse(SOURCE)
    index = NodeIndex(tree)
    function, branch, _ = tree.body
    emptied = apply_edits(tree, [edit_of(index, s) for s in function.body], index)
    assert ast.unparse(emptied.body[0]) == "def f(x):\n    pass"
    nested = [edit_of(index, branch.body[0]), edit_of(index, branch, ast.Expr(ast.Name("z", ast.Load())))]
    assert ast.unparse(apply_edits(tree, nested, index).body[1]) == "z"


def test_merging_refuses_edits_inside_one_another():
    tree = ast.parse(SOURCE)
    index = NodeIndex(tree)
    function, branch, assign = tree.body
    assert mergeable(index, [[edit_of(index, branch)], [edit_of(index, assign)]]) is not None
    assert mergeable(index, [[edit_of(index, function)], [edit_of(index, function.body[0])]]) is None
