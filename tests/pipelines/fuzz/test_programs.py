"""The fuzz job's program helpers: the device statement in a candidate, the minimize budget."""

from __future__ import annotations

from pathlib import Path

from app.engine.fuzz.program import on_device, split_device
from app.pipelines.fuzz.programs import candidate_timeout, minimize_budget, reserve_for_test, with_device
from app.pipelines.fuzz.state import DeviceRun

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "torchfuzz" / "seed_9_default.py"


def test_the_device_statement_goes_back_after_the_imports_of_every_candidate():
    """A TorchFuzz program starts `import torch` then `torch.set_default_device(...)`: in front
    of the import, every candidate failed with `NameError: torch` instead of the bug."""
    prologue, rest = split_device(on_device(REAL.read_text(), "cpu"))
    assert prologue == "torch.set_default_device('cpu')\n" and rest.startswith("import torch\n")
    placed = with_device(prologue, rest)
    assert placed.splitlines()[:3] == ["import torch", "torch.set_default_device('cpu')",
                                       "torch._dynamo.config.capture_scalar_outputs = True"]
    smaller = "import torch\nimport sys\nx = torch.ones(2)\n"
    assert with_device(prologue, smaller) == "import torch\nimport sys\ntorch.set_default_device('cpu')\nx = torch.ones(2)\n"
    assert with_device(prologue, "x = 1\n") == prologue + "x = 1\n"  # no import left: the candidate fails
    assert with_device("", smaller) == smaller


def test_the_minimize_stage_gets_the_phase_less_what_the_test_stage_needs():
    runs = [DeviceRun("cpu", True, "RuntimeError: x", seconds=20.0), DeviceRun("cuda", False, "", seconds=10.0)]
    assert reserve_for_test(runs) == 2 * 1.5 * (30.0 + 15.0)
    assert minimize_budget(1000.0, runs) == 1000.0 - 135.0
    assert minimize_budget(1000.0, runs, asked=60.0) == 60.0
    assert minimize_budget(100.0, runs) == 0.0
    assert candidate_timeout(runs, ceiling=120.0) == 80.0  # 4 x the slowest run
    assert candidate_timeout([DeviceRun("cpu", True, "e", seconds=1.0)], ceiling=120.0) == 10.0
    assert candidate_timeout(runs, ceiling=30.0) == 30.0


def test_a_candidate_keeps_its_line_numbers_with_the_device_on_the_import_line():
    # the minimizer reads a candidate's traceback against the candidate it made: a device
    # statement on a line of its own moved every line by one, and each candidate's failing line
    # read as another (the fuzz stage then kept the whole program: "the oracle rejects the program")
    prologue = "torch.set_default_device('cpu')\n"
    body = "import torch  # the library\nx = torch.ones(2)\nprint(x.mean())\n"
    placed = with_device(prologue, body, same_lines=True)
    assert placed == "import torch; torch.set_default_device('cpu')  # the library\nx = torch.ones(2)\nprint(x.mean())\n"
    assert placed.splitlines()[1:] == body.splitlines()[1:]
    assert with_device(prologue, "x = 1\n", same_lines=True) == prologue + "x = 1\n"  # no import: in front
