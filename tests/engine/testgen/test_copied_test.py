"""The CI failure's test made of the failing test's own code: copied beside it, marked in the
file's idiom, the rest of the file untouched; parametrized tests are refused with the reason."""

from __future__ import annotations

import pytest

from app.engine.testgen.copied_test import Uncopyable, copied_test

PYTEST_FILE = '''\
"""Calc tests."""
from calc import safe_divide


def helper():
    return 0


def test_divide_by_zero():
    assert safe_divide(1, helper()) == float("inf")


def test_add():
    assert 1 + 2 == 3
'''

UNITTEST_FILE = '''\
import unittest


class TestCalc(unittest.TestCase):
    def setUp(self):
        self.zero = 0

    def test_divide(self):
        self.assertEqual(1 / self.zero, float("inf"))


if __name__ == "__main__":
    unittest.main()
'''

DEVICE_FILE = '''\
import torch
from torch.testing._internal.common_device_type import instantiate_device_type_tests
from torch.testing._internal.common_utils import TestCase, run_tests


class TestLogaddexp(TestCase):
    def test_bool_backward(self, device):
        x = torch.rand(3, device=device, requires_grad=True)
        torch.logaddexp2(torch.ones(1, dtype=torch.bool, device=device), x).sum().backward()

    @dtypes(torch.float)
    def test_typed(self, device, dtype):
        pass


instantiate_device_type_tests(TestLogaddexp, globals())

if __name__ == "__main__":
    run_tests()
'''


def test_a_pytest_function_is_copied_after_itself_with_a_strict_xfail_and_the_import_it_needs():
    made = copied_test(PYTEST_FILE, "tests/test_calc.py::test_divide_by_zero", reason="ZeroDivisionError: division")
    assert made.node_id == "tests/test_calc.py::test_divide_by_zero_repro" and made.idiom == "pytest"
    assert made.marked.startswith('"""Calc tests."""\nfrom calc import safe_divide\nimport pytest\n')
    assert ("    assert safe_divide(1, helper()) == float(\"inf\")\n\n\n# Reproduces the CI failure of "
            "tests/test_calc.py::test_divide_by_zero (Scrubbot): ZeroDivisionError: division\n"
            "@pytest.mark.xfail(strict=True, reason='ZeroDivisionError: division')\n"
            "def test_divide_by_zero_repro():\n") in made.marked
    assert made.marked.count("def test_add") == 1 and "xfail" not in made.unmarked
    assert "def test_divide_by_zero_repro():" in made.unmarked


def test_a_unittest_method_is_copied_into_its_class_as_an_expected_failure():
    made = copied_test(UNITTEST_FILE, "tests/test_calc.py::TestCalc::test_divide", reason="ZeroDivisionError")
    assert made.node_id == "tests/test_calc.py::TestCalc::test_divide_repro"
    assert "    @unittest.expectedFailure\n    def test_divide_repro(self):\n        self.assertEqual(1 / self.zero" \
        in made.marked
    assert made.marked.count("import unittest") == 1


def test_a_device_type_test_is_an_expected_failure_on_the_failing_device_only():
    made = copied_test(DEVICE_FILE, "test/test_ops.py::TestLogaddexpCPU::test_bool_backward_cpu",
                       reason="RuntimeError: Subtraction, the `-` operator, with a bool tensor is not supported")
    assert made.node_id == "test/test_ops.py::TestLogaddexpCPU::test_bool_backward_repro_cpu"
    assert "    @expectedFailureCPU\n    def test_bool_backward_repro(self, device):" in made.marked
    assert "from torch.testing._internal.common_device_type import expectedFailureCPU\n" in made.marked


@pytest.mark.parametrize(("node", "why"), [
    ("tests/test_calc.py::test_divide_by_zero[1]", "one parameter of a parametrized test"),
    ("test/test_ops.py::TestLogaddexpCPU::test_typed_cpu_float32", "test_typed is parametrized"),
    ("tests/test_calc.py::test_missing", "no function test_missing"),
])
def test_what_cannot_be_copied_says_why(node, why):
    text = DEVICE_FILE if "ops" in node else PYTEST_FILE
    with pytest.raises(Uncopyable, match=why):
        copied_test(text, node, reason="x")


def test_a_parametrized_decorator_is_refused():
    text = "import pytest\n\n\n@pytest.mark.parametrize('x', [1, 2])\ndef test_x(x):\n    assert x == 1\n"
    with pytest.raises(Uncopyable, match="parametrized"):
        copied_test(text, "t.py::test_x", reason="x")
