"""The failing test an issue is offered: generated from the repro, verified in the sandbox to
fail with the issue's error and to xfail with its marker, shown in the comment; `/scrub test`
is the word that opens its pull request (end to end: test_scrub_test_e2e.py)."""

from __future__ import annotations

from app.domain import CommandRequest, RerunFrom
from app.engine.testgen.issue_test import IssueTest
from app.pipelines.commands import resolve
from app.pipelines.issue import KIND
from app.pipelines.issue.state import IssueState, Reproduction, TestPR
from app.pipelines.issue.testcase import FORCE_TEST_PR, comment_section, why_no_test
from app.pipelines.kit.testcheck import TestCheck
from tests.fakes.fake_github import fake_github
from tests.pipelines.issue.test_stages import (
    REPO,
    our_comments,
    py,
    scrub,
    state_of,
    traceback,
    trusted_issue,
)


def test_an_issue_that_still_reproduces_is_offered_a_verified_failing_test(fake_github):  # noqa: F811
    number = trusted_issue(fake_github, py("x = [1, 2]\nraise ValueError(f'bad size {len(x)}')")
                           + "\n" + traceback("ValueError: bad size 2"), title="sizes are wrong")
    finished, ctx = scrub(fake_github, number, config={"offer_tests": True})
    assert finished.verdict == "reproduces"
    state = state_of(ctx)
    unmarked, marked = state.test_checks
    assert (unmarked.ok, unmarked.statuses) == (True, {"": "FAILED"})  # fails with the issue's error...
    assert (marked.ok, marked.statuses) == (True, {"": "XFAIL"})  # ...and xfails with its marker
    assert "ValueError: bad size" in unmarked.output
    test = state.offered_test
    assert test.name == f"test_issue_{number}" and test.style == "pytest"
    assert "@pytest.mark.xfail(strict=True" in test.block and "raise ValueError" in test.block
    (comment,) = our_comments(fake_github, number)
    assert "A failing test, verified to fail with this error and to xfail with its marker:" in comment
    assert f"def test_issue_{number}():" in comment and "`/scrub test` (write permission)" in comment
    assert ctx.completed_stages()["place_test"] == {} and state.test_pr is None  # nobody asked yet
    assert "## Failing Test" in ctx.artifacts["report.md"][1]


def _state(**kw) -> IssueState:
    result = {"outcome": "error", "exception": "RuntimeError", "message": "boom"}
    reproduced = Reproduction("reproduces", runs=5, reproduced=5, result=result, description="RuntimeError: boom")
    return IssueState(**{"verdict": "reproduces", "reproduction": reproduced, **kw})


def test_only_a_deterministic_failure_that_raises_gets_a_test():
    assert why_no_test(_state()) is None
    assert "flaky" in why_no_test(_state(reproduction=Reproduction("reproduces", flaky_ratio="2/6", result={})))
    printed = Reproduction("reproduces", runs=5, reproduced=5, result={"outcome": "passed"}, description="passed")
    assert "without raising" in why_no_test(_state(reproduction=printed))
    assert why_no_test(IssueState(verdict="fixed")) == "not needed (fixed)"


def test_the_comment_offers_a_verified_test_or_names_the_pull_request():
    test = IssueTest("t.py", "test_issue_1", "pytest", "m", "u", "def test_issue_1():\n    raise X")
    ok = [TestCheck(True, False, "without the marker: test FAILED"), TestCheck(True, True, "with: test XFAIL")]
    assert "`/scrub test`" in comment_section(_state(offered_test=test, test_checks=ok))
    assert comment_section(_state(offered_test=test, test_checks=ok[:1])) == ""  # not verified: not offered
    opened = TestPR(True, url="https://github.com/o/r/pull/7")
    assert comment_section(_state(offered_test=test, test_checks=ok, test_pr=opened)) == (
        "A draft pull request adds this failing test: https://github.com/o/r/pull/7")


def test_scrub_test_reruns_from_the_test_stage_with_its_flag_set():
    word = next(w for w in KIND.words if w.word == "test")

    request = CommandRequest(command="test", repo=REPO, issue=3, user="maintainer",
                             issue_url=f"https://github.com/{REPO}/issues/3")
    action = resolve(request)
    assert isinstance(action, RerunFrom) and action.stage == "test" and action.flag == FORCE_TEST_PR
    assert word.help_line.startswith("- `/scrub test`: open a draft pull request")
