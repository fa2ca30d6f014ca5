"""The fuzz job's `diagnose` stage: the failing program on its failing device is the subject,
each variant replaces the program for one run over the checkout, judged by the reproduced
exception class. The sandbox is stood in for here (the real one: tests/pipelines/kit)."""

from __future__ import annotations

from app.engine.diagnosis.model import Observation
from app.pipelines.base import run_pipeline
from app.pipelines.fuzz import diagnosis
from app.pipelines.fuzz.stages import STAGES
from app.pipelines.fuzz.state import DeviceRun, FuzzState

PROGRAM = """\
import torch
DEVICE = "cuda"
def f(x):
    return torch.nn.functional.softplus(x) * 2
x = torch.randn(8, device=DEVICE)
torch.testing.assert_close(torch.compile(f)(x), f(x), rtol=0.05, atol=1.0)
"""


class FakeVariants:
    made: list = []

    def __init__(self, runner, path, argv, judge, described):
        FakeVariants.made.append((path, argv))

    def __call__(self, variant, timeout_s):
        # Only Inductor breaks: every variant below it passes.
        return [Observation("passed", False, "passed") for _ in range(variant.runs)]


def test_a_compiled_program_gets_the_backend_ladder_on_its_failing_device(fuzz_world, monkeypatch):
    monkeypatch.setattr(diagnosis, "TreeVariantRunner", FakeVariants)
    ctx = fuzz_world.context({"fuzzed-program": PROGRAM})
    run_pipeline(STAGES[:2], ctx, any_queue=True)  # inputs, checkout
    stored = {k: v for out in ctx.completed_stages().values() for k, v in out.items()}
    state = FuzzState.load(stored | {"program": PROGRAM, "error": "AssertionError: Tensor-likes are not close!",
                                     "exception": "AssertionError", "failing_devices": ["cpu"]}
                           ).merged({"devices": [DeviceRun("cpu", True, "AssertionError: x", "Mismatched elements")]})
    done = diagnosis.diagnose_stage(ctx, state)
    report = done.output["diagnosis"]
    assert FakeVariants.made == [("repro.py", ["repro.py"])]
    assert report.pattern == "compile_failure"
    ladder = next(f for f in report.findings if f.experiment == "backends")
    assert "only Inductor fails: the bug is in Inductor" in ladder.line
    assert report.next_step == "An Inductor bug: route it to `module: inductor`."
