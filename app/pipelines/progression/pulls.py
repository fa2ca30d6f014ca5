"""A draft PR's re-check: does its generated test pass on the default branch now?

The CI job verified that its test fails (it xfails) at the commit where the failure was seen:
that is the witness. Here the test runs, without its expected-failure marker, on the default
branch's tip, in the sandbox, over the repository's own checkout (placed on top for the run,
never written into the checkout). It must pass every one of the runs the failure rate the CI
job's reruns measured needs (`ProbePlan` for the low end of its 95% interval: 4 for a failure
seen in 5 of 5 reruns, up to 10 for a flaky one; at least 3) to count as fixed; one failing run says it still fails; anything else (no test collected, an error, a
timeout) is inconclusive. For a fix, the commits between the failing commit and the tip are
listed (`GET /compare`) with the PRs their messages name: the fix is among them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.domain import Verdict
from app.engine.sandbox.treerun import pytest_argv
from app.engine.testgen.repro_test import without_expected_failure
from app.engine.verdict.bisect_probe import ABSENT, REPRODUCES, UNKNOWN, ProbePlan
from app.engine.verdict.culprit import CANDIDATES_SHOWN, pulls_in_message, ref
from app.github.port import GitHubAPIError
from app.pipelines.base import RunContext, StageResult
from app.pipelines.kit.checkout import drop_checkout, ensure_checkout
from app.pipelines.kit.sandbox import tree_runner
from app.pipelines.kit.xfail import pytest_counts

MIN_RUNS, MAX_RUNS = 3, 10
UNMEASURED_RATE = 0.2  # no reruns measured: the rate the issue kind's "fixed" is sized for


@dataclass(frozen=True)
class AtTip:
    repo: str
    head_sha: str


def runs_plan(rerun: dict | None) -> ProbePlan:
    """Passing runs needed: for the low end of the CI reruns' failure rate (module docstring)."""
    interval = (rerun or {}).get("interval")
    low = float(interval[0]) if isinstance(interval, (list, tuple)) and interval else UNMEASURED_RATE
    plan = ProbePlan.for_rate(low if low > 0 else UNMEASURED_RATE, max_runs=MAX_RUNS)
    return plan if plan.clean_runs >= MIN_RUNS else ProbePlan(MIN_RUNS, plan.design_rate)


def read(counts: dict[str, int], exit_code: int | None, timed_out: bool) -> str:
    """One pytest run of the unmarked test: ABSENT (passed), REPRODUCES (failed) or UNKNOWN."""
    if timed_out:
        return UNKNOWN
    if exit_code == 0 and counts.get("passed", 0) >= 1 and not counts.get("failed") and not counts.get("error"):
        return ABSENT
    if counts.get("failed", 0) >= 1 and not counts.get("error"):
        return REPRODUCES
    return UNKNOWN


def recheck(ctx: RunContext, params: dict[str, Any], head: str) -> StageResult:
    path, source = str(params.get("test_path") or ""), str(params.get("test_source") or "")
    if not path or not source:
        return StageResult(summary="the CI job left no generated test to re-run",
                           output={"outcome": UNKNOWN, "verdict": Verdict.inconclusive, "why": "no generated test"})
    tip = AtTip(str(params["repo"]), head)
    plan = runs_plan(params.get("rerun"))
    worktree = ensure_checkout(ctx, tip)
    try:
        runner = tree_runner(ctx, worktree)
        files = {path: without_expected_failure(source)}
        outcome, runs, observed = ABSENT, 0, ""
        while runs < plan.clean_runs and outcome == ABSENT:
            result = runner.run(pytest_argv(path), float(ctx.settings.repro_timeout), files=files)
            text = result.output.text()
            counts = pytest_counts(text)
            outcome, runs = read(counts, result.exit_code, result.timed_out), runs + 1
            observed = ", ".join(f"{n} {k}" for k, n in counts.items()) or f"exit code {result.exit_code}"
    finally:
        drop_checkout(ctx, tip)
    output = {"outcome": outcome, "runs": runs, "observed": observed}
    where = f"{params.get('base')}@{head[:12]}"
    if outcome == REPRODUCES:
        return StageResult(summary=f"the test still fails on {where} ({observed})",
                           output=output | {"verdict": Verdict.reproduces})
    if outcome == UNKNOWN:
        return StageResult(summary=f"inconclusive on {where}: {observed}",
                           output=output | {"verdict": Verdict.inconclusive, "why": observed})
    failed_at = str(params.get("failed_at") or "")
    witness = f"the CI job verified that this test fails at {failed_at[:12]}" if failed_at else \
        "the CI job verified that this test failed"
    return StageResult(summary=f"the test passes on {where} ({runs} runs); {witness}",
                       output=output | {"verdict": Verdict.fixed, "witness": witness, "witness_holds": True})


def fix_range(ctx: RunContext, params: dict[str, Any], head: str) -> str:
    """`fixed between <failing commit> and <tip> (N commits: #a, #b, ...)`, in words."""
    repo, failed_at = str(params["repo"]), str(params.get("failed_at") or "")
    if not failed_at or ctx.github is None:
        return ""
    try:
        compared = ctx.github.compare_commits(repo, failed_at, head)
    except GitHubAPIError as exc:
        if exc.transient:
            raise
        return f"the fix is between {failed_at[:12]} and {head[:12]}"
    commits = compared.get("commits") or []
    pulls = [n for c in commits for n in pulls_in_message(str((c.get("commit") or {}).get("message") or ""), repo)]
    shown = ", ".join(ref(n, repo, repo) for n in list(dict.fromkeys(pulls))[:CANDIDATES_SHOWN])
    count = int(compared.get("total_commits") or len(commits))
    if count == 1 and pulls:
        return f"fixed by {shown}"
    return f"the fix is among the {count} commits between {failed_at[:12]} and {head[:12]}" + \
        (f" ({shown}{' ...' if len(set(pulls)) > CANDIDATES_SHOWN else ''})" if shown else "")
