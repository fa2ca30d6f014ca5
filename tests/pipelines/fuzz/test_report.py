"""The fuzz job's report status, read from the typed state."""

from __future__ import annotations

from app.pipelines.kit.phases import Halt
from app.pipelines.fuzz.report import build_report, outcome
from app.pipelines.fuzz.state import FuzzJob, FuzzState
from app.settings import Settings

JOB = FuzzJob(repo="acme/tlib", seed=5, head_sha="d" * 40)
NO_FIX = Settings(fix_command="")  # whatever SCRUB_FIX_COMMAND the environment has
GENERATED = {"path": "tests/test_ops.py", "name": "test_fuzz_seed_5", "placement": "covers mean"}


def test_a_halt_gives_its_status_and_reason():
    state = FuzzState(job=JOB, halt=Halt(reason="the marked test does not xfail", status="Partial"),
                      pr_url="https://github.com/acme/tlib/pull/1")
    assert outcome(state, NO_FIX) == ("Partial", ["the marked test does not xfail"])


def test_a_branch_pushed_offline_counts_as_published():
    assert outcome(FuzzState(job=JOB, offline=True, branch="scrub/fuzz-5"), NO_FIX) == ("Success", [])
    assert outcome(FuzzState(job=JOB, branch="scrub/fuzz-5"), NO_FIX) == (
        "Partial", ["no pull request was opened"])


def test_an_unverified_fix_is_partial_only_when_a_fix_command_is_configured():
    state = FuzzState(job=JOB, pr_url="https://github.com/acme/tlib/pull/1",
                      fix={"verified": False, "summary": "the fix command changed nothing"})
    assert outcome(state, NO_FIX) == ("Success", [])
    assert outcome(state, Settings(fix_command="fix.sh")) == (
        "Partial", ["the fix was not verified: the fix command changed nothing"])


def test_the_report_uses_the_checked_out_commit_and_the_minimized_program():
    state = FuzzState(job=JOB, commit="e" * 40, program="import tlib\n", minimized={"lines": "4 -> 1 lines"},
                      generated=GENERATED, branch="scrub/fuzz-5", offline=True)
    report = build_report(state, NO_FIX, {})
    facts = dict(report.facts)
    assert facts["Repository"] == "acme/tlib@" + "e" * 12 and facts["Minimized"] == "4 -> 1 lines"
    assert facts["Test"] == "tests/test_ops.py::test_fuzz_seed_5 (covers mean)"
    assert report.status == "Success" and report.test_created == "tests/test_ops.py::test_fuzz_seed_5"
    assert [s.title for s in report.sections] == ["Failing program (minimized)"]
    assert dict(build_report(FuzzState(job=JOB), NO_FIX, {}).facts)["Repository"] == "acme/tlib@" + "d" * 12


def test_a_program_that_no_longer_fails_says_so_in_the_status_line():
    """pytorch/pytorch#164486's program passes on torch 2.13: the report read "**Status**: Failed"
    and the run "Failed: " with nothing after it."""
    reason = "the fuzzer ran seed 164486 without a failure (exit code 0)"
    state = FuzzState(job=JOB, halt=Halt(reason=reason, status="Failed"))
    report = build_report(state, NO_FIX, {})
    assert report.summary == reason and outcome(state, NO_FIX) == ("Failed", [reason])
