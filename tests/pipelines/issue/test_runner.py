"""The issue runner's repeated runs: warm from one fork server per verdict, cold when a script
behaves differently in a forked interpreter (issue #22, "answers in seconds")."""

from __future__ import annotations

import pytest

from app.pipelines.issue import runner
from app.settings import Settings

REPORTED = {"kind": "exception", "exception": "RuntimeError", "message": "the bug"}


def settings() -> Settings:
    return Settings(sandbox="bwrap", repro_timeout=60)


@pytest.mark.torch
def test_the_repeats_run_warm_and_agree_with_the_cold_run():
    source = "import torch\nraise RuntimeError('the bug')\n"
    result = runner.reproduce(settings(), source, REPORTED)
    assert (result.verdict, result.runs) == ("reproduces", 5)
    assert result.modes["cold"] == 1 and result.modes["fork"] == 4


@pytest.mark.torch
def test_a_script_that_differs_when_forked_runs_cold():
    # In a forked child torch is already imported: this script fails there and passes cold.
    source = "import sys\nif 'torch' in sys.modules:\n    raise RuntimeError('the bug')\nimport torch\n"
    result = runner.reproduce(settings(), source, REPORTED, clean_runs=2)
    assert result.verdict == "fixed" and result.reproduced == 0  # the forked run's failure is not counted
    assert result.modes == {"cold": 2}


def test_a_compiled_repro_repeats_from_a_zygote_with_inductor_preloaded_and_dynamo_warmed():
    # Measured on a shared 2-core machine (load 16-18), back to back, #118648's compiled repro:
    # a warm repeat took 35-37 s (two at once) / 16 s (alone) from a torch-only zygote, 13-14 s /
    # 7 s from this one.
    compiled = runner.warm_runs(settings(), "local", "import torch\nf = torch.compile(lambda x: x + 1)\nf(torch.ones(1))\n")
    plain = runner.warm_runs(settings(), "local", "import torch\nprint(torch.ones(1))\n")
    try:
        assert "torch._inductor.compile_fx" in compiled.server.preload and compiled.server.warmup
        assert "torch._dynamo" in plain.server.preload and plain.server.warmup is None
    finally:
        compiled.disable()
        plain.disable()


def test_a_run_the_environment_stopped_settles_the_verdict_at_once():
    for stop in ("missing-dependency", "unavailable-hardware", "needs-reproduction"):
        assert runner._settled([stop])  # every run stops the same way: four more say nothing new
    assert not runner._settled(["different-error"])  # a different error still runs 5 times
    assert not runner._settled(["missing-dependency", "fixed"])  # runs that disagree go on
