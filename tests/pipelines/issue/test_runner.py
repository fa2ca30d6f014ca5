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
