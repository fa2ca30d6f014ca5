"""`issue`: scrub a GitHub issue (seed 001): its repro run in the sandbox, a verdict, one comment.

Started by the `scrub` label (the webhook router) or a `/scrub` command; `README.md` says how
each stage decides.
"""

from app.domain import CommandRequest, Lifecycle, NewRun, RunKind, Verdict
from app.pipelines.issue.report import NEXT_STEPS
from app.pipelines.issue.stages import FORCE_BISECT, FORCE_MINIMIZE, STAGES
from app.pipelines.issue.state import IssueState
from app.pipelines.issue.stress import FORCE_STRESS
from app.pipelines.issue.testcase import FORCE_TEST_PR
from app.pipelines.kind import Force, Kind, Word


def start(request: CommandRequest, word: str) -> NewRun:
    """A scrub of the issue the command was typed on (it had none yet)."""
    return NewRun(kind=RunKind.issue, target=request.issue_url, trigger=f"comment:{word}",
                  params={"repo": request.repo, "issue": request.issue, "url": request.issue_url,
                          "requested_by": request.user})


KIND = Kind(
    name=RunKind.issue,
    stages=tuple(STAGES),
    state=IssueState,
    words=(
        Word("approve", Lifecycle.approve, "let a run that waits for approval go on (untrusted or risky repro)"),
        Word("retry", Lifecycle.retry, "run the latest scrub of this issue again from the start"),
        Word("bisect", Force("bisect", FORCE_BISECT), "find the version that changed the outcome, even if not needed"),
        Word("minimize", Force("minimize", FORCE_MINIMIZE), "shrink the reproduction again"),
        Word("stress", Force("stress", FORCE_STRESS), "run seed 004's stress test on the reproducing repro: "
             "its failure rate and the time to the first failure"),
        Word("test", Force("test", FORCE_TEST_PR),
             "open a draft pull request adding the failing test this issue's comment shows"),
    ),
    start=start,
    notices=(Verdict.screenshot_only, Verdict.unavailable_hardware, Verdict.inconclusive, Verdict.missing_dependency,
             Verdict.awaiting_approval, Verdict.passes_now, Verdict.needs_reproduction),
    next_steps=NEXT_STEPS,
)
