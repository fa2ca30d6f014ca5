"""The CI job's report: the status rule (Success / Partial / Failed) and what the report says."""

from __future__ import annotations

from app.domain import StageSummary
from app.engine.report.render import render_run_report
from app.pipelines.ci_failure.job import CIJob
from app.pipelines.ci_failure.report import build_report, outcome
from app.pipelines.ci_failure.state import CIState, FixAttempt, GeneratedFile
from app.pipelines.kit.phases import Halt
from app.pipelines.kit.xfail import XfailCheck
from app.settings import Settings

JOB = CIJob(repo="o/r", test="tests/test_x.py::test_y", exception="ZeroDivisionError", message="division by zero",
            signature="c" * 64, run_url="https://github.com/o/r/actions/runs/9")
RERUN = {"runs": 17, "failures": 17, "rate": 1.0, "interval": [0.82, 1.0]}
TEST = GeneratedFile("tests/scrub/test_y_repro.py", "import pytest\n", "repro")


def _done(**extra) -> CIState:
    return CIState(job=JOB, verdict="deterministic", rerun=RERUN, generated=TEST, test_created=TEST.path,
                   verification=XfailCheck(True, "1 xfailed"), pr_url="https://github.com/o/r/pull/3", **extra)


def test_a_verified_test_with_a_pr_is_a_success(tmp_path):
    assert outcome(_done(), Settings(data_dir=tmp_path)) == ("Success", [])


def test_a_halt_decides_the_status_and_is_the_reason(tmp_path):
    state = CIState(job=JOB, halt=Halt("not reproducible here: 0/44 runs failed", "Failed"))
    assert outcome(state, Settings(data_dir=tmp_path)) == ("Failed", ["not reproducible here: 0/44 runs failed"])


def test_a_configured_fix_that_was_not_verified_makes_it_partial(tmp_path):
    settings = Settings(data_dir=tmp_path, fix_command="fix-it")
    assert outcome(_done(), settings) == ("Partial", ["the fix was not verified: no fix"])
    fix = FixAttempt(0, "", "diff", verified=False, summary="1/3 verification runs passed")
    assert outcome(_done(fix=fix), settings)[1] == ["the fix was not verified: 1/3 verification runs passed"]
    verified = FixAttempt(0, "", "diff", verified=True, summary="3/3 verification runs passed")
    assert outcome(_done(fix=verified), settings) == ("Success", [])


def test_a_stress_test_missing_the_20_minute_target_is_partial(tmp_path):
    state = _done(stress={"budget": {"passes": False}, "described": "2 failures in 300 iterations"})
    status, reasons = outcome(state, Settings(data_dir=tmp_path))
    assert status == "Partial" and "20 minutes" in reasons[0]


def test_a_test_without_a_pull_request_is_partial(tmp_path):
    state = _done()
    state.pr_url = None
    assert outcome(state, Settings(data_dir=tmp_path)) == ("Partial", ["no pull request was opened"])


def test_the_report_gives_the_rates_the_test_the_stages_and_the_hint(tmp_path):
    state = _done(hint_confirmed=False, commit="abc123", owners=["@core"], test_file="tests/test_x.py")
    state.job = CIJob(**{**JOB.to_dict(), "deterministic_hint": True})
    summaries = [StageSummary("rerun", "done", "deterministic: 17/17 runs failed", 12.5),
                 StageSummary("test", "done", "xfails", 3.0)]
    report = build_report(state, Settings(data_dir=tmp_path), {"rerun": {}, "test": {}}, state.pr_url, summaries)
    text = render_run_report(report)
    assert report.status == "Success"
    assert "17/17 runs failed, rate 100% (95% Wilson interval 82%–100%)" in text
    assert "True (contradicted by the reruns)" in text
    assert "verified to xfail in the sandbox" in text and TEST.path in text
    assert "@\u200bcore (CODEOWNERS of tests/test_x.py)" in text  # named, not pinged
    assert [line.name for line in report.stages] == ["rerun", "test"]


def test_a_failed_rerun_shows_its_last_output(tmp_path):
    state = CIState(job=JOB, verdict="not_reproducible", rerun={**RERUN, "failures": 0, "rate": 0.0},
                    rerun_output="1 passed in 0.01s", halt=Halt("not reproducible here", "Failed"))
    text = render_run_report(build_report(state, Settings(data_dir=tmp_path), {}, None))
    assert "Last rerun output" in text and "1 passed in 0.01s" in text
    assert "Rerun on hardware like the CI job's" in text
