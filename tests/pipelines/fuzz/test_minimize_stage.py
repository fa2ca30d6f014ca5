"""The fuzz job's minimize stage on a program whose first statement sets global state.

TorchFuzz programs start `import torch` / `torch.set_default_device('cuda')`. The stage used to
move the device statement in front of every candidate, before the import it needs, so the
"failure to keep" became `NameError: name 'torch' is not defined` and the program shrank to
the device line. Here a tiny library (`devlib`, written beside the program: no torch) stands
in for torch: its kernel is wrong on `accel` only, and the default device is global state.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from app.engine.sandbox.capture import CapturedOutput
from app.engine.sandbox.runner import ProcessResult
from app.pipelines.fuzz import stages
from app.pipelines.fuzz.state import DeviceRun, FuzzJob, FuzzState
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings

DEVLIB = '''
_device = "cpu"


def set_default_device(device):
    global _device
    _device = device


def tensor(values):
    return (list(values), _device)


def total(t):
    values, device = t
    if device == "accel" and len(values) > 1:
        raise RuntimeError(f"accel reduction kernel read {len(values) + 1} values")
    return sum(values)
'''

PROGRAM = '''import devlib
devlib.set_default_device('accel')
import math
scale = math.sqrt(4.0)
values = [1.0 * scale, 2.0, 3.0]
x = devlib.tensor(values)
print("scale", scale)
print(devlib.total(x))
'''


class LocalRunner:
    """Runs a program as `repro.py` with `devlib` beside it (plain subprocess: our own code)."""

    def __init__(self, folder):
        self.folder = folder
        (folder / "devlib.py").write_text(DEVLIB)
        self.sources: list[str] = []

    def run(self, source: str, timeout_s: float) -> ProcessResult:
        self.sources.append(source)
        (self.folder / "repro.py").write_text(source)
        started = time.monotonic()
        done = subprocess.run([sys.executable, "repro.py"], check=False, cwd=self.folder, capture_output=True,
                              timeout=max(timeout_s, 30))
        output = done.stdout + done.stderr
        return ProcessResult(done.returncode, None, False, time.monotonic() - started,
                             CapturedOutput(head=output, total_bytes=len(output)), "cold")


@pytest.fixture
def runner(tmp_path, monkeypatch):
    local = LocalRunner(tmp_path)
    monkeypatch.setattr(stages, "ensure_checkout", lambda ctx, job: tmp_path)
    monkeypatch.setattr(stages, "program_runner", lambda ctx, worktree: local)
    return local


def test_a_default_device_statement_keeps_its_place_and_the_failure_is_the_programs_own(runner, tmp_path):
    state = FuzzState(job=FuzzJob(repo="acme/devlib"), program=PROGRAM, fuzz_error="RuntimeError: x",
                      devices=[DeviceRun("cpu", False, ""), DeviceRun("accel", True, "RuntimeError: accel")],
                      failing_devices=["accel"])
    ctx = MemoryRunContext(run_id=1, github=None, params={"minimize_budget_s": 60},
                           settings=Settings(data_dir=tmp_path / "data"))
    result = stages.minimize_stage(ctx, state)
    # the failure the stage keeps is the unmodified program's, checked before any candidate
    assert runner.sources[0] == PROGRAM
    program = result.output["program"]
    assert "NameError" not in program
    lines = [line for line in program.splitlines() if line.strip()]
    assert lines[0] == "import devlib" and lines[1] == "devlib.set_default_device('accel')", program
    assert "devlib.total(" in program and "math" not in program, program
    assert result.output["minimized"]["lines"].startswith("6 -> "), result.output
