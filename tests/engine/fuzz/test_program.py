"""A fuzzed program's device, operations and tolerances."""

from app.engine.fuzz.program import ProgramFacts, on_device, operations

PROGRAM = """import torch
DEVICE = "cuda"
x = torch.randn(3, device=DEVICE)
out = torch.nn.functional.gelu(torch.add(x, x))
torch.testing.assert_close(out, torch.compile(torch.nn.functional.gelu)(x + x), rtol=0.05, atol=1.0)
"""


def test_facts():
    facts = ProgramFacts.of(PROGRAM)
    assert facts.device == "cuda" and facts.compiles
    assert facts.operations[:2] == ("gelu", "add")
    assert facts.tolerances == {"rtol": 0.05, "atol": 1.0}


def test_on_device_rewrites_only_the_device_constant():
    moved = on_device(PROGRAM, "cpu")
    assert 'DEVICE = \'cpu\'' in moved and moved.count("cuda") == 0
    assert on_device("torch.set_default_device('cuda')\nx = 1\n", "cpu").startswith("torch.set_default_device('cpu')")
    assert on_device("x = 1\n", "cpu") == "x = 1\n"


def test_on_device_rewrites_a_default_device_call_where_it_stands():
    program = "import torch\ntorch.set_default_device('cuda')\ntorch._dynamo.config.capture_scalar_outputs = True\n"
    assert on_device(program, "cpu").splitlines() == [
        "import torch", "torch.set_default_device('cpu')", "torch._dynamo.config.capture_scalar_outputs = True"]


def test_operations_skip_plumbing_and_local_functions():
    assert operations("def f(x):\n    return x\nprint(f(tlib.mean(tlib.tensor([]))))\n") == ["mean"]
