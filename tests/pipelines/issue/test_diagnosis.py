"""The issue's `diagnose` stage: when it runs, and on a real issue what its experiments show
(the comment and `scrub issue --json` carry it: test_testcase.py, tests/cli/test_issue_cli.py)."""

from __future__ import annotations

import pytest

from app.engine.diagnosis.text import markdown
from app.engine.issue.repro import Repro
from app.engine.verdict.values import StatedValues
from app.pipelines.issue import runner
from app.pipelines.issue.diagnosis import diagnose, wanted
from app.pipelines.issue.state import IssueState, Reproduction
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings
from tests.conftest import ROOT
from tests.fakes.fake_github import fake_github
from tests.pipelines.issue.test_stages import (
    our_comments,
    py,
    scrub,
    state_of,
    traceback,
    trusted_issue,
)


def test_experiments_run_for_a_bug_that_reproduces_or_that_ran_out_of_memory_instead():
    ran = Reproduction("reproduces", description="RuntimeError: x")
    assert wanted(IssueState(verdict="reproduces", reproduction=ran)) is None
    oom = Reproduction("different-error", description="RuntimeError: DefaultCPUAllocator: can't allocate memory")
    assert wanted(IssueState(verdict="different-error", reproduction=oom)) is None
    other = Reproduction("different-error", description="KeyError: 'x'")
    assert wanted(IssueState(verdict="different-error", reproduction=other)).startswith("not needed")
    assert wanted(IssueState(verdict="fixed", reproduction=ran)).startswith("not needed")
    assert wanted(IssueState(stop=True, verdict="feature")) == "not needed (feature)"


@pytest.mark.torch
def test_a_real_nan_issue_gets_the_op_that_made_the_first_nan(tmp_path):
    """pytorch/pytorch#184037: LPPool2d with a fractional norm returns NaN for negative inputs.
    The report states the wrong value ("any NaN: True"), which is how its runs are judged."""
    source = (ROOT / "benchmarks/real_issues/repros/i184037.py").read_text()
    settings = Settings(sandbox="bwrap", repro_timeout=60, experiments_budget_s=120, data_dir=tmp_path)
    run = runner.run_once(settings, source, runner.current_label(settings))
    assert "any NaN: True" in run["output_tail"]
    state = IssueState(
        verdict="reproduces", stated_values=StatedValues("any NaN: True", "any NaN: False"),
        repro=Repro(source, "reporter", "https://github.com/pytorch/pytorch/issues/184037", "", True, trusted=True),
        reproduction=Reproduction("reproduces", runs=5, reproduced=5, result=run, description="passed"))
    done = diagnose(MemoryRunContext(settings=settings, params={"repo": "pytorch/pytorch", "issue": 184037}), state)
    report = done.output["diagnosis"]
    assert report.pattern == "nan_inf"
    lines = {f.experiment: f.line for f in report.findings}
    assert lines["first_nonfinite"] == ("first NaN from `aten.pow.Tensor_Scalar` (inside `lp_pool2d`), "
                                        "at line 6: `out = m(inp)`")
    assert lines["float64"].startswith("fails the same in float64: not a float32 precision problem")
    assert report.next_step.startswith("Start at the operation that makes the first non-finite value")
    text = markdown(report)
    assert "**Diagnosis** (pattern `nan_inf`):" in text and "- **first NaN/Inf**: first NaN from" in text


def test_the_comment_says_which_experiments_a_cpu_worker_could_not_run(fake_github):
    error = "RuntimeError: CUDA error: device-side assert triggered"
    number = trusted_issue(fake_github, py(f"raise RuntimeError({error.split(': ', 1)[1]!r})") + "\n"
                           + traceback(error))
    finished, ctx = scrub(fake_github, number, config={"experiments_budget_s": 60})
    assert finished.verdict == "reproduces"
    (comment,) = our_comments(fake_github, number)
    assert "**Diagnosis** (pattern `device_side_assert`):" in comment
    assert ("- **CUDA_LAUNCH_BLOCKING=1**: not run (which kernel launch fails): it needs a GPU, and this worker "
            "has none") in comment
    assert "Next step: A device-side assert is almost always an index out of bounds" in comment
    assert state_of(ctx).diagnosis.patterns == ["device_side_assert"]
