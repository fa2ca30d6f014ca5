"""A TorchFuzz program as a test body: no leaked global state, readable, asserting."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

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


REAL = Path(__file__).resolve().parents[2] / "fixtures" / "torchfuzz" / "seed_9_default.py"


def _real_test():
    spec = FuzzTestSpec("test_fuzz_seed_9", REAL.read_text(), "pytorch", ("cpu",), ("cpu",),
                        ("Found by fuzz seed 9.",), "fuzz seed 9: RuntimeError: gather(): Expected dtype int32/int64")
    return fuzz_test(spec, "test/test_ops.py", None, "Fuzz repros.")


def test_a_real_torchfuzz_program_reads_as_a_test_and_both_commits_are_lint_clean(tmp_path):
    test = _real_test()
    for name, text in (("marked", test.marked), ("unmarked", test.unmarked)):
        assert "var_node_" not in text and "print(" not in text and "set_default_device" not in text
        assert "with torch.device(device):" in text
        assert "torch._dynamo.config.patch(capture_scalar_outputs=True)" in text
        assert "result_compiled =" not in text and "compiled_program(*args)" in text  # run, not an unused local
        (tmp_path / f"{name}.py").write_text(text)
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated", "--select", "F,E9",
                           str(tmp_path / "marked.py"), str(tmp_path / "unmarked.py")], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert "expectedFailureCPU" in test.marked and "expectedFailure" not in test.unmarked


@pytest.mark.torch
@needs_bwrap
def test_the_real_programs_test_fails_with_its_error_on_cpu_and_leaks_nothing_into_the_next_test(tmp_path):
    (tmp_path / "test").mkdir()
    after = ("\n\nclass TestAfter(TestCase):\n    def test_after(self):\n        import torch\n\n"
             "        assert torch.get_default_device().type == 'cpu'\n"
             "        assert not torch._dynamo.config.capture_scalar_outputs\n")
    text = _real_test().unmarked.replace('\n\nif __name__', after + '\n\nif __name__')
    (tmp_path / "test/test_ops.py").write_text(text)
    result = TreeRunner(Sandbox(SandboxSpec()), tmp_path).run(
        pytest_argv("test/test_ops.py", extra=["-rA", "-p", "no:hypothesispytest"]), 300)
    output = result.output.text()
    assert "leaked" not in output, output[-3000:]
    assert "FAILED test/test_ops.py::TestFuzzSeed9CPU::test_fuzz_seed_9_cpu" in output, output[-3000:]
    assert "RuntimeError: gather(): Expected dtype int32/int64 for index" in output, output[-3000:]
    assert "PASSED test/test_ops.py::TestAfter::test_after" in output, output[-3000:]


def test_a_minimized_compiled_function_keeps_no_unused_local_for_the_linter(tmp_path):
    """The minimizer drops a compiled function's `return`, which leaves its last result assigned
    and never read: on pytorch/pytorch#164875's program, `t3 = torch.add(t0, t2)` and ruff's F841
    in the test commit. The call stays (the compiler still traces it); only the name goes."""
    program = ("import torch\n\n\n@torch.compile(fullgraph=True, dynamic=True, backend='eager')\n"
               "def compiled_program(arg_0):\n    var_node_1 = arg_0\n    var_node_0 = torch.add(var_node_1, 1)\n\n\n"
               "arg_0 = torch.ones(2)\nresult_compiled = compiled_program(arg_0)\n")
    body = clean_body(program, style="pytorch")
    assert "    torch.add(t0, 1)" in body and "t1 =" not in body and "t0 = arg_0" in body
    assert "compiled_program(arg_0)" in body and "result_compiled" not in body
    (tmp_path / "body.py").write_text(body)
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated", "--select", "F,E9",
                           str(tmp_path / "body.py")], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
