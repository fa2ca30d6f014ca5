"""The pieces of a bug fingerprint: which check failed, what it compares, what its message means."""

from __future__ import annotations

import ast

import pytest

from app.engine.minimize.checks import (
    cast_of,
    check_operands,
    computing,
    is_computed_index,
    value_meanings,
)


def _operands(source: str, line: int) -> list[str] | None:
    found = check_operands(ast.parse(source), line)
    return None if found is None else [ast.unparse(operand) for operand in found]


@pytest.mark.parametrize(
    ("source", "line", "expected"),
    [
        ("assert torch.allclose(a, b, atol=1e-5), f'{n} differ'\n", 1, ["a", "b"]),
        ("assert not torch.isnan(w.grad).any()\n", 1, ["torch.isnan(w.grad).any()"]),
        ("assert err(a) < tol\n", 1, ["err(a)", "tol"]),
        ("torch.testing.assert_close(ours, ref, rtol=0.01)\n", 1, ["ours", "ref"]),
        ("self.assertTrue(torch.allclose(a, b))\n", 1, ["a", "b"]),
        ("np.testing.assert_allclose(\n    a,\n    b)\n", 2, ["a", "b"]),
        ("if not torch.allclose(a, b):\n    raise AssertionError('differ')\n", 2, ["a", "b"]),
        ("def f(x):\n    assert x.sum() == 1\nf(y)\n", 2, ["x.sum()", "1"]),
    ],
)
def test_check_operands_of_asserts_check_calls_and_guarded_raises(source, line, expected):
    assert _operands(source, line) == expected


def test_a_line_that_is_not_a_check_has_no_operands():
    assert _operands("y = model(x)\n", 1) is None
    assert _operands("raise AssertionError\n", 1) is None  # not guarded by a comparison
    assert _operands("print(torch.allclose(a, b))\n", 1) is None
    assert _operands("x = 1\n", 5) is None


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("37/512 outputs differ", {"count#0:nonzero"}),
        ("0/1 outputs differ", {"count#0:zero"}),
        ("Tensor-likes are not close!\n\nMismatched elements: 3 / 8 (37.5%)", {"count#0:nonzero", "count#1:nonzero"}),
        ("Greatest absolute difference: nan at index (0, 1)", {"nan"}),
        ("loss is -inf", {"inf"}),
        ("3 mismatched values, mismatches: 0", {"count#0:nonzero", "count#1:zero"}),
        # shapes and dimensions are not counts: they may shrink to anything
        ("The size of tensor a (64) must match the size of tensor b (32) at non-singleton dimension 1", set()),
        ("isnan check failed in torch.nan_to_num", set()),
    ],
)
def test_value_meanings_read_counts_and_nan_not_shapes(message, expected):
    assert value_meanings(message) == expected


def test_narrowing_casts_and_computed_indexes_are_data_path_steps():
    def call(text: str) -> ast.Call:
        return ast.parse(text, mode="eval").body  # type: ignore[return-value]

    assert cast_of(call("x.half()")) == "cast:half"
    assert cast_of(call("x.to(torch.bfloat16)")) == "cast:bfloat16"
    assert cast_of(call("x.to(dtype=torch.float16)")) == "cast:float16"
    assert cast_of(call("x.float()")) is None  # widening: builds inputs, rarely the bug
    assert cast_of(call("model.to(dtype)")) is None  # the target is not in the text
    subscripts = {text: ast.parse(text, mode="eval").body for text in
                  ("x[mask]", "x[:, targets]", "x[range(n), y]", "x[0]", "x[:, 1:]", "x[..., :-1]", "x[-1]")}
    assert {text for text, node in subscripts.items() if is_computed_index(node)} == {
        "x[mask]", "x[:, targets]", "x[range(n), y]"}


def test_computing_leaves_out_the_check_and_plumbing():
    assert computing(frozenset({"isnan", "any", "reshape", "parseargs", "softmax"})) == {"softmax"}
