"""`/scrub stress` in the issue kind: the stress stage, the comment's note, the report's section."""

from __future__ import annotations

from app.domain import Verdict
from app.pipelines.issue.state import IssueState
from app.pipelines.issue.stress import FORCE_STRESS, stress, stress_note
from app.pipelines.kit.stress import StressFinding
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings
from tests.pipelines.issue.test_stages import our_comments, py, scrub, traceback, trusted_issue
from tests.pipelines.kit.test_stress import LEAKY
from tests.fakes.fake_github import fake_github  # noqa: F401  (fixture)

MEASURED = StressFinding(measured=True, failures=12, iterations=25, elapsed_s=9.6, workers=2, rate_per_minute=75.0,
                         first_failure_s=1.84, first_failure="RuntimeError: stale `cache`", budget="...",
                         meets_budget=True, test_path="tests/scrub/test_repro_stress.py", xfails=True)


def test_the_stage_runs_only_when_asked(tmp_path):
    ctx = MemoryRunContext(settings=Settings(data_dir=tmp_path), params={"repo": "o/r", "issue": 1})
    result = stress(ctx, IssueState(verdict=Verdict.reproduces))
    assert result.skipped and "stress" not in result.output


def test_asked_on_a_repro_that_does_not_reproduce_it_says_so(tmp_path):
    ctx = MemoryRunContext(settings=Settings(data_dir=tmp_path), params={FORCE_STRESS: True})
    result = stress(ctx, IssueState(verdict=Verdict.fixed))
    finding = result.output["stress"]
    assert result.skipped and not finding.measured and "does not reproduce here (verdict fixed)" in finding.why_not


def test_the_note_gives_the_rate_and_the_time_to_the_first_failure():
    note = stress_note(MEASURED)
    assert note.startswith("Stress test (seed 004): 12 of 25 runs failed in 10 s with 2 workers "
                           "(75.00 failures per minute); the first failure came after 1.8 s.")
    assert "It failed with `` RuntimeError: stale `cache` ``." in note and "meets seed 004's target" in note


def test_a_forced_run_puts_the_measurement_in_the_comment_and_the_report(fake_github, tmp_path):
    number = trusted_issue(fake_github, py(LEAKY) + "\n" + traceback("RuntimeError: stale cache entry on run 1"))
    finished, ctx = scrub(fake_github, number, config={"data_dir": tmp_path}, **{FORCE_STRESS: True,
                                                                                   "stress_window_s": 5})
    assert finished.verdict == "reproduces", ctx.lines
    found = ctx.completed_stages()["stress"]["stress"]
    assert found["measured"] and found["failures"] >= 1 and found["first_failure_s"] is not None, found
    (comment,) = our_comments(fake_github, number)
    assert comment.startswith("This issue still reproduces")
    assert "Stress test (seed 004):" in comment and "the first failure came after" in comment
    report = ctx.artifacts["report.md"][1]
    assert "## Stress Test" in report and "failures per minute" in report
    assert "test_repro_stress.py" in ctx.artifacts  # the generated stress file, for the maintainer
