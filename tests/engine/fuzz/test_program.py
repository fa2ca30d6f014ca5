"""A fuzzed program's device, operations and tolerances."""

from app.engine.fuzz.program import ProgramFacts, needs_device, on_device, operations, split_device

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


def test_split_device_and_needs_device():
    prologue, rest = split_device(PROGRAM)
    assert prologue == 'DEVICE = "cuda"\n' and "DEVICE =" not in rest
    assert needs_device(prologue, rest)
    assert not needs_device(prologue, "import torch\ntorch.mean(torch.ones(0))\n")
    assert split_device("x = 1\n") == ("", "x = 1\n")


def test_operations_skip_plumbing_and_local_functions():
    assert operations("def f(x):\n    return x\nprint(f(tlib.mean(tlib.tensor([]))))\n") == ["mean"]
