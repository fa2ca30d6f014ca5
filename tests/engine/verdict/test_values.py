"""Wrong results printed without an assert: stated values, compared with what a run printed."""

from __future__ import annotations

import pytest

from app.engine.verdict.values import StatedValues, compare, numbers, shows, stated_values

FENCE = "```"


@pytest.mark.parametrize("text, actual, expected", [
    ("It prints `tensor([nan, 1.])` but expected `tensor([0., 1.])`", "tensor([nan, 1.])", "tensor([0., 1.])"),
    ("the result is 3.5 but it should be 4.0.", "3.5", "4.0"),
    ("returns False, but expected True", "False", "True"),
    ("expected 0.5, got 0.25", "0.25", "0.5"),
    ("Expected: tensor([1, 2])\nActual: tensor([1, 3])", "tensor([1, 3])", "tensor([1, 2])"),
    (f"Output:\n{FENCE}\ntensor([1., 2.])\n{FENCE}\nExpected output:\n{FENCE}\ntensor([1., 3.])\n{FENCE}",
     "tensor([1., 2.])", "tensor([1., 3.])"),
])
def test_stated_values_are_read_from_prose_and_labelled_blocks(text, actual, expected):
    assert stated_values(text) == StatedValues(actual, expected)


def test_no_pair_or_equal_values_state_nothing():
    assert stated_values("I run torch 2.1 and it crashes") is None
    assert stated_values("it prints 1.0 but expected 1.0") is None


def test_numbers_skip_dtype_and_device_and_read_booleans():
    assert numbers("tensor([1.5000, nan], dtype=torch.float16) True") == pytest.approx([1.5, float("nan"), 1.0],
                                                                                       nan_ok=True)


def test_a_stated_value_shows_within_tolerance_and_in_order():
    assert shows(numbers("x = tensor([0.3333, 0.6667, 1.0000])"), [0.33333, 0.66667])
    assert not shows(numbers("tensor([0.6667, 0.3333])"), [0.3333, 0.6667])


def test_compare_says_which_stated_value_the_output_shows():
    values = StatedValues("tensor([nan, 1.])", "tensor([0., 1.])")
    assert compare("tensor([nan, 1.])\n", values) == "actual"
    assert compare("tensor([0., 1.])\n", values) == "expected"
    assert compare("tensor([5., 6.])\n", values) is None


def test_a_label_on_its_own_line_takes_the_next_line_and_code_is_not_a_statement():
    text = (f"{FENCE}python\nactual = torch.special.i1(x)\nexpected = torch.tensor([6.7e307])\n{FENCE}\n\n"
            f"{FENCE}text\nactual:\ntensor([inf], dtype=torch.float64)\n\nexpected:\ntensor([6.7004e+307])\n{FENCE}")
    assert stated_values(text) == StatedValues("tensor([inf], dtype=torch.float64)", "tensor([6.7004e+307])")


def test_a_value_the_script_holds_as_a_literal_is_not_shown_by_printing_it():
    values = StatedValues("tensor([inf])", "tensor([6.7004e+307])")
    source = "import torch\nexpected = torch.tensor([6.700424559186402e+307])\nprint(torch.special.i1(x))\nprint(expected)"
    printed = "tensor([inf])\ntensor([6.7004e+307])\n"
    assert compare(printed, values) is None  # both shown: cannot tell
    assert compare(printed, values, source) == "actual"  # the expected value is only the script's reference


def test_a_tiny_value_written_with_an_exponent_is_not_zero():
    # Real shape (#192406): "actual: tensor(0.)" against "expected: tensor(4.2484e-18)", where
    # the absolute tolerance made the two the same number and the pair stated nothing.
    text = f"### Actual vs expected result\n\n{FENCE}text\nactual:\ntensor(0.)\n\nexpected:\ntensor(4.2484e-18)\n{FENCE}"
    values = stated_values(text)
    assert values == StatedValues("tensor(0.)", "tensor(4.2484e-18)")
    source = "import torch\nx = torch.tensor(-40.0)\nexpected = torch.tensor(4.248354255291589e-18)\nprint(x.grad, expected)"
    assert compare("actual:\ntensor(0.)\nexpected:\ntensor(4.2484e-18)", values, source) == "actual"
    assert not shows(numbers("tensor(0.)"), numbers("4.2484e-18"))
    assert shows(numbers("tensor([0.0000, 1.0000])"), numbers("[0.000001, 1.0]"))  # fixed notation keeps its rounding


def test_a_check_the_script_prints_under_observed_is_read_on_its_own_line():
    # Real shape (#184037): "Observed:" shows `any NaN: True` and a random tensor; "Expected:" is prose.
    text = (f"Observed:\n\n{FENCE}\nany NaN: True\ntensor([nan, nan, 0.8487, 0.6920])\n{FENCE}\n\nExpected:\n\n"
            "Either compute `|x| ** p` or raise on negative input.")
    values = stated_values(text, title="LPPool2d returns NaN for non-integer norm_type")
    assert values == StatedValues("True", "False", "any NaN:")
    assert stated_values(text) is None  # a flag the title does not speak of is not the bug
    flags = text.replace("any NaN: True", "is_contiguous: True\nany NaN: True")
    assert stated_values(flags, title="returns NaN") == values  # the one about the title
    assert StatedValues.from_dict(values.to_dict()) == values
    assert compare("any NaN: True\ntensor([nan, 0.8487, nan, 0.0000])", values) == "actual"  # not the tensor's numbers
    assert compare("any NaN: False\ntensor([1.0000, 0.8487])", values) == "expected"
    assert compare("tensor([1.0000, 0.0000])", values) is None  # the check line is not printed: nothing to read
    assert "label" not in StatedValues("1", "2").to_dict()  # the stored shape of a plain pair is unchanged


def test_a_boolean_or_a_zero_is_not_the_scripts_own_reference_because_the_script_has_a_0_or_1():
    # #184037: `kernel_size=(1, 1)` and `manual_seed(0)` hid the printed `any NaN: True`.
    source = "import torch\ntorch.manual_seed(0)\nm = torch.nn.LPPool2d(2.3, kernel_size=(1, 1))\nprint('any NaN:', x)"
    values = StatedValues("True", "False", "any NaN:")
    assert compare("any NaN: True\ntensor([nan])", values, source) == "actual"
    assert compare("0.5", StatedValues("0.5", "0.25"), "x = 0.5\nprint(x)") is None  # a distinctive literal still is
