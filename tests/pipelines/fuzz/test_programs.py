"""The fuzz job's program helpers: the device statement in a candidate, the minimize budget."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from app.engine.fuzz.program import on_device, split_device
from app.engine.minimize.oracle import signature_of
from app.engine.minimize.session import minimize_repro, original_signature
from app.engine.sandbox.capture import CapturedOutput
from app.engine.sandbox.runner import ProcessResult
from app.pipelines.fuzz.programs import (candidate_run, candidate_timeout, compile_off, exception_class,
                                         minimize_budget, reserve_for_test, run_on_devices, with_device)
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


# A stand-in `torch` whose compiler computes wrongly (x3), as an inductor bug would, and whose
# `torch.compiler.set_stance("force_eager")` turns compiling off, as torch's does.
STUB_TORCH = '''\
import types

_stance = ["default"]


def compile(fn, **options):
    if _stance[0] == "force_eager":
        return fn
    return lambda *args: fn(*args) * 3


compiler = types.SimpleNamespace(set_stance=lambda stance: _stance.__setitem__(0, stance))
'''

# The shape of a TorchFuzz program under its numerics check (EagerVsFullGraphDynamicCompileWithNumericsCheck):
# the two sides, then a comparison that ends the script with exit 1 and no traceback.
MISMATCH = '''\
import torch


def fuzzed_program(arg_0, sentinel):
    var_node_1 = arg_0 * 2
    var_node_0 = var_node_1 + 1
    result = var_node_0 * sentinel
    return result


sentinel = 1.0
arg_0 = 4.0
args = (arg_0,) + (sentinel,)
out_eager = fuzzed_program(*args)
print('Eager Success! ✅')
compiled_program = torch.compile(fuzzed_program, fullgraph=True, dynamic=True)
out_compiled = compiled_program(*args)
print('Compile Success! ✅')
diff = abs(out_eager - out_compiled)
rel_diff = diff / (abs(out_eager) + 1e-12) * 100
print(f'Relative diff (sum): {rel_diff:.6f}%')
if rel_diff > 5 and diff > 1:
    print('❌ Forward output sums differ significantly (relative and absolute)!')
    print('out_eager_sum:', out_eager)
    print('out_compiled_sum:', out_compiled)
    import sys; sys.exit(1)
'''


def _python_over(stub_dir: Path):
    """A run of a candidate: plain Python over the stand-in torch."""

    def run(source: str, timeout_s: float) -> ProcessResult:
        done = subprocess.run([sys.executable, "-c", source], capture_output=True, timeout=timeout_s,
                              env={**os.environ, "PYTHONPATH": str(stub_dir)})
        out = done.stdout + done.stderr
        return ProcessResult(done.returncode, None, False, 0.1, CapturedOutput(out, b"", len(out)), "cold")

    return run


def test_a_compiled_mismatch_minimizes_to_a_program_that_still_compiles_and_compares(tmp_path):
    """An eager-vs-compiled mismatch ends the program with exit 1 and no traceback: a candidate
    that exits 1 without compiling (`sys.exit(1)` alone, the comparison made unconditional, the
    compiled side gone) fails "the same", and the minimizer kept `import sys; sys.exit(1)`.
    A candidate must also pass with compiling turned off."""
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(STUB_TORCH)
    run = _python_over(tmp_path)
    expected = original_signature(MISMATCH, run, 30.0)
    assert expected.kind == "exit" and signature_of(run(compile_off(MISMATCH), 30.0)) is None
    judged = candidate_run(run, "", expected, None, compiled=True)
    outcome = minimize_repro(MISMATCH, run=judged, cold_run=judged, expected=expected, timeout_s=30.0,
                             max_candidates=200)
    smaller = outcome.result.source
    assert outcome.reproduces and outcome.result.final_lines < outcome.result.original_lines
    # both sides and the comparison stay (the minimizer may inline them)
    assert smaller.count("fuzzed_program(") >= 2 and "torch.compile(fuzzed_program" in smaller, smaller
    assert "sys.exit(1)" in smaller, smaller
    assert signature_of(run(smaller, 30.0)) is not None  # it still fails compiled ...
    assert signature_of(run(compile_off(smaller), 30.0)) is None  # ... and only compiled


def test_a_compiled_mismatch_is_named_by_what_the_program_printed_and_is_a_torch_bug(tmp_path):
    """No traceback, exit 1: the error was "exit 1", which names no bug (and reached the test's
    assertion and the commit message as such)."""
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(STUB_TORCH)
    runner = SimpleNamespace(run=_python_over(tmp_path))
    [run] = run_on_devices(runner, MISMATCH, [""], 30.0)
    assert run.fails and run.triage["phase"] == "compare" and run.triage["verdict"] == "torch-bug"
    assert run.error == ("compiled and eager results differ: ❌ Forward output sums differ significantly "
                         "(relative and absolute)!; out_eager_sum: 9.0; out_compiled_sum: 27.0")
    assert exception_class(run.error) == "compiled and eager results differ"
