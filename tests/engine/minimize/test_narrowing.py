"""The narrowing passes: the one item a failing loop's message names, and constant lengths."""

from __future__ import annotations

import ast
import textwrap

import torch

from app.engine.minimize.edits import NodeIndex, apply_edits
from app.engine.minimize.passes.narrowing import fold_lengths, narrow_named_loops

GRADS = textwrap.dedent("""\
    import torch
    class Pool(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.key = torch.nn.Linear(2, 2)
            self.value = torch.nn.Linear(2, 2)
    model = Pool()
    model.value.weight.grad = torch.full((2, 2), float('nan'))
    model.key.weight.grad = torch.zeros(2, 2)
    for name, param in model.named_parameters():
        assert param.grad is None or torch.isfinite(param.grad).all(), f"non-finite gradient in {name}"
""")


def _candidates(pass_, source: str, lines=(), message: str = "") -> list[str]:
    tree = ast.parse(source)
    index = NodeIndex(tree, failing_lines=tuple(lines), failing_message=message)
    return [ast.unparse(apply_edits(tree, edits, index)) for edits in pass_(tree, index)]


def _failure(source: str) -> str:
    try:
        exec(compile(source, "repro", "exec"), {})
    except AssertionError as error:
        return str(error)
    return ""


def test_a_loop_over_named_parameters_becomes_the_check_of_the_one_the_message_names():
    message = _failure(GRADS)
    assert message == "non-finite gradient in value.weight"
    [narrowed] = _candidates(narrow_named_loops, GRADS, lines=(10, 11), message=message)
    assert "named_parameters" not in narrowed and "for " not in narrowed
    assert "torch.isfinite(model.value.weight.grad).all()" in narrowed
    assert "f'non-finite gradient in {'value.weight'}'" in narrowed or "'value.weight'" in narrowed
    assert _failure(narrowed) == message  # the same check, on the same parameter, fails the same way


def test_a_numbered_path_reads_the_item_by_index():
    source = "for name, p in net.named_parameters():\n    assert ok(p), f'bad {name}'\n"
    [narrowed] = _candidates(narrow_named_loops, source, lines=(2,), message="bad blocks.0.weight")
    assert "ok(net.blocks[0].weight)" in narrowed


def test_loops_it_cannot_narrow_are_left_alone():
    message = "non-finite gradient in value.weight"
    assert _candidates(narrow_named_loops, GRADS, lines=(7,), message=message) == []  # not on the stack
    assert _candidates(narrow_named_loops, GRADS, lines=(10, 11), message="non-finite gradient") == []
    breaks = GRADS + "    break\n"
    assert _candidates(narrow_named_loops, breaks, lines=(10, 11), message=message) == []
    prefixed = GRADS.replace("named_parameters()", "named_parameters(prefix='m')")
    assert _candidates(narrow_named_loops, prefixed, lines=(10, 11), message=message) == []


def test_lengths_of_sized_constructors_and_displays_fold_to_constants():
    source = "a = len(torch.ones(3, 2))\nb = len([x, y])\nc = len(torch.arange(2, 5))\nd = len(data)\n"
    folded = _candidates(fold_lengths, source)
    assert folded == [ast.unparse(ast.parse(source.replace("len(torch.ones(3, 2))", "3"))),
                      ast.unparse(ast.parse(source.replace("len([x, y])", "2")))]
    assert len(torch.ones(3, 2)) == 3  # what the fold assumes of the constructor
