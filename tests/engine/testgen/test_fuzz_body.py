"""A TorchFuzz program as a test body: no leaked global state, readable, asserting."""

from __future__ import annotations

import ast

import pytest

from app.engine.sandbox.runner import Sandbox, SandboxSpec
from app.engine.sandbox.treerun import TreeRunner, pytest_argv
from app.engine.testgen.device_test import FuzzTestSpec, fuzz_test
from app.engine.testgen.fuzz_body import clean_body, readable_names
from tests.engine.sandbox.helpers import needs_bwrap

PROGRAM = '''\
import sys
import torch
torch.set_default_device("cuda")
torch._dynamo.config.capture_scalar_outputs = True
torch._inductor.config.fallback_random = True


def foo(arg0):
    var_node_7 = torch.nn.functional.relu(arg0)
    var_node_3 = torch.cumsum(var_node_7, dim=0)
    return var_node_3


arg0 = torch.rand([4, 4])
if __name__ == "__main__":
    out_eager = foo(arg0)
    print("Eager Success! ✅")
    out_compiled = torch.compile(foo, fullgraph=True)(arg0)
    print("Compile Success! ✅")
    if (out_eager - out_compiled).abs().max() > 0.1:
        print("outputs differ")
        sys.exit(1)
'''


def test_names_become_readable_in_order_of_use():
    assert readable_names("var_node_7 = f(x)\nvar_node_3 = g(var_node_7)\nt0 = 1\n") == \
        "t1 = f(x)\nt2 = g(t1)\nt0 = 1\n"


def test_global_state_is_scoped_and_the_exit_fails_the_test():
    body = clean_body(PROGRAM.split("if __name__")[0] + "\n".join(
        line[4:] for line in PROGRAM.split('if __name__ == "__main__":\n')[1].splitlines()),
        style="pytorch", bug="fuzz seed 7: compiled and eager results differ")
    tree = ast.parse(body)
    outer = tree.body[-1]
    assert isinstance(outer, ast.With) and ast.unparse(outer.items[0].context_expr) == "torch.device(device)"
    patches = [ast.unparse(n.items[0].context_expr) for n in ast.walk(tree) if isinstance(n, ast.With)]
    assert "torch._dynamo.config.patch(capture_scalar_outputs=True)" in patches
    assert "torch._inductor.config.patch(fallback_random=True)" in patches
    assert "set_default_device" not in body and "config.capture_scalar_outputs =" not in body
    assert "self.fail('fuzz seed 7: compiled and eager results differ')" in body and "sys.exit" not in body
    assert "var_node" not in body and "t0 = torch.nn.functional.relu(arg0)" in body
    assert "Eager Success" not in body and "outputs differ" in body  # progress prints go, the diagnostic stays


def test_the_generated_pytorch_test_imports_only_what_each_commit_uses():
    spec = FuzzTestSpec("test_fuzz_seed_7", "import torch\nx = torch.ones(2)\nassert x.sum() == 3\n", "pytorch",
                        (), ("",), ("Found by fuzz seed 7.",), "fuzz seed 7: AssertionError")
    test = fuzz_test(spec, "test/test_fuzz.py", None, "Fuzz repros.")
    assert "import unittest" in test.marked and "import unittest" not in test.unmarked


LEAKY = '''\
import torch
torch.set_default_device("cpu")
torch._dynamo.config.capture_scalar_outputs = True
x = torch.ones(3)
if x.sum() != 4:
    raise SystemExit(1)
'''


@pytest.mark.torch
@needs_bwrap
def test_a_default_device_program_passes_torchs_teardown_checks(tmp_path):
    """Unscoped, `set_default_device` fails TestCase.tearDown ("torch function mode stack was
    leaked"); scoped, the test fails with the bug's own assertion and the next test is clean."""
    (tmp_path / "test").mkdir()
    spec = FuzzTestSpec("test_fuzz_seed_5", LEAKY, "pytorch", ("cpu",), ("cpu",), ("Found by fuzz seed 5.",),
                        "fuzz seed 5: the sum is wrong")
    test = fuzz_test(spec, "test/test_leak.py", None, "Fuzz repros.")
    after = ("\n\nclass TestAfter(TestCase):\n    def test_after(self):\n"
             "        assert torch.get_default_device().type == 'cpu'\n"
             "        assert not torch._dynamo.config.capture_scalar_outputs\n")
    text = test.unmarked.replace('\n\nif __name__', "\nimport torch" + after + '\n\nif __name__')
    (tmp_path / "test/test_leak.py").write_text(text)
    result = TreeRunner(Sandbox(SandboxSpec()), tmp_path).run(
        pytest_argv("test/test_leak.py", extra=["-rA", "-p", "no:hypothesispytest"]), 300)
    output = result.output.text()
    assert "leaked" not in output, output[-3000:]
    assert "fuzz seed 5: the sum is wrong" in output, output[-3000:]
    assert "PASSED test/test_leak.py::TestAfter::test_after" in output, output[-3000:]
