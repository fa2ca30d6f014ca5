"""The fuzz test in the repository's conventions: device-generic, expected failure only where it fails."""

import ast

import pytest

from app.engine.fuzz.results import device_results
from app.engine.sandbox.runner import Sandbox, SandboxSpec
from app.engine.sandbox.treerun import TreeRunner, pytest_argv
from app.engine.testgen.device_test import FuzzTestSpec, fuzz_test
from tests.engine.sandbox.helpers import needs_bwrap

PROGRAM = """import torch
DEVICE = "cpu"
x = torch.ones(3, device=DEVICE)
torch.testing.assert_close(torch.nn.functional.gelu(x), torch.nn.functional.relu(x), rtol=0.05, atol=0.01)
"""
EXISTING = '''"""Ops tests."""
import torch
from torch.testing._internal.common_utils import TestCase, run_tests


class TestOps(TestCase):
    def test_gelu(self):
        self.assertEqual(torch.nn.functional.gelu(torch.zeros(1)), torch.zeros(1))


if __name__ == "__main__":
    run_tests()
'''


def _spec(style, devices=("cpu", "cuda"), failing=("cpu",)):
    return FuzzTestSpec("test_fuzz_seed_9", PROGRAM, style, devices, failing,
                    ("Found by fuzz seed 9", "Tolerances: atol=0.01, rtol=0.05"), "fuzz seed 9: AssertionError")


def test_pytorch_style_marks_only_the_failing_device_and_compares_with_the_fuzzers_tolerances():
    test = fuzz_test(_spec("pytorch"), "test/test_ops.py", EXISTING, "t")
    marked, unmarked = test.marked, test.unmarked
    assert "    @expectedFailureCPU\n    def test_fuzz_seed_9(self, device):" in marked
    assert "expectedFailureCUDA" not in marked and "expectedFailure" not in unmarked
    assert "from torch.testing._internal.common_device_type import expectedFailureCPU, " \
           "instantiate_device_type_tests" in marked
    assert marked.count("from torch.testing._internal.common_utils import") == 1  # TestCase already imported
    assert "instantiate_device_type_tests(TestFuzzSeed9, globals(), only_for=('cpu', 'cuda'))" in marked
    assert "self.assertEqual(torch.nn.functional.gelu(x), torch.nn.functional.relu(x), rtol=0.05, atol=0.01)" \
        in marked and test.rewrote_assertion
    assert "# Found by fuzz seed 9\n# Tolerances: atol=0.01, rtol=0.05\nclass TestFuzzSeed9" in marked
    assert marked.index("class TestFuzzSeed9") < marked.index('if __name__ == "__main__":')
    assert "DEVICE = device" in marked
    ast.parse(marked), ast.parse(unmarked)


def test_pytest_style_xfails_the_failing_device_only():
    test = fuzz_test(_spec("pytest", ("cpu", "accel"), ("accel",)), "tests/test_new.py", None, "Fuzz repros.")
    assert "pytest.param('accel', marks=pytest.mark.xfail(strict=True" in test.marked
    assert "pytest.param('cpu', id='cpu')" in test.marked
    assert "xfail" not in test.unmarked and test.marked.startswith('"""Fuzz repros."""\n\nimport pytest\n')
    assert "torch.testing.assert_close" in test.marked and not test.rewrote_assertion


def test_a_device_independent_program_is_one_case_marked_as_a_whole():
    test = fuzz_test(_spec("pytorch", (), ("",)), "test/test_ops.py", EXISTING, "t")
    assert "    @unittest.expectedFailure\n    def test_fuzz_seed_9(self):" in test.marked
    assert "import unittest\n" in test.marked and "instantiate_device_type_tests" not in test.marked


@pytest.mark.torch
@needs_bwrap
def test_the_pytorch_test_fails_on_cpu_then_is_expected_to_fail_with_expected_failure_cpu(tmp_path):
    (tmp_path / "test").mkdir()
    test = fuzz_test(_spec("pytorch", ("cpu",), ("cpu",)), "test/test_ops.py", EXISTING, "t")
    runner = TreeRunner(Sandbox(SandboxSpec()), tmp_path)
    seen = {}
    for label, text in (("unmarked", test.unmarked), ("marked", test.marked)):
        (tmp_path / "test/test_ops.py").write_text(text)
        runner.repack()
        result = runner.run(pytest_argv("test/test_ops.py", extra=["-rA", "-p", "no:hypothesispytest"]), 300)
        output = result.output.text()
        seen[label] = device_results(output, ["cpu"], "test_fuzz_seed_9")
        assert "PASSED test/test_ops.py::TestOps::test_gelu" in output  # the file's own test still passes
    # torch's expectedFailureCPU swallows the failure: the marked case reports a pass.
    assert seen == {"unmarked": {"cpu": "FAILED"}, "marked": {"cpu": "PASSED"}}
