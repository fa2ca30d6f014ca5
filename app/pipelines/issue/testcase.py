"""A failing test for every confirmed bug: the `test` stage offers it, `/scrub test` opens the PR.

`offer_test` (after `diagnose`): when the issue still reproduces deterministically and the repro
fails by raising, its (minimized) code becomes `test_issue_<N>` (`app.engine.testgen.issue_test`),
in the style the repository most likely uses; it is run in the sandbox on its own, without the
marker (it must fail with the issue's error) and with it (it must xfail). The comment shows it.

`/scrub test` (write permission; the `FORCE_TEST_PR` run param) reruns `test` (it then runs
whatever `SCRUB_OFFER_TESTS` says, on the current build) and two more stages. `place_test`
(a repro worker: it runs the repository's code) checks out the default branch, reads its
`.github/scrub.yml` (style, test file), places the test in the test file that covers the repro's
operations (`app.engine.fuzz.placement`, as the fuzz job does) and verifies it again there.
`open_test_pr` (GitHub I/O) commits that file on `scrub/issue-<N>`, pushes it and opens a draft
pull request whose body carries the verification and the diagnosis. Nothing is pushed unless
both checks passed in the repository.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from app.engine.diagnosis.text import markdown
from app.engine.fuzz.config import FuzzConfigError, load_fuzz_config
from app.engine.fuzz.placement import choose_test_file
from app.engine.fuzz.program import compiles, device_of, operations
from app.engine.git.repo import GitError, commit_files, push_branch
from app.engine.git.tree import UnsafePath
from app.engine.report.render import fence, no_mentions
from app.engine.testgen.issue_test import (
    STANDALONE_PATH,
    IssueTest,
    default_style,
    issue_spec,
    issue_test,
)
from app.engine.verdict import classify as verdicts
from app.pipelines.base import RunContext, StageResult
from app.pipelines.issue import runner
from app.pipelines.issue.state import IssueState, TestPR
from app.pipelines.kit.branch import default_branch
from app.pipelines.kit.checkout import drop_checkout, ensure_checkout, remote_for
from app.pipelines.kit.sandbox import tree_runner
from app.pipelines.kit.lint import lint_files
from app.pipelines.kit.testcheck import TestCheck, check_test, standalone_runner

FORCE_TEST_PR = "force_test_pr"  # run param set by `/scrub test`
TEST_TIMEOUT_S = 300.0  # one pytest run of the generated test (imports torch, may compile)
Json = dict[str, Any]


@dataclass(frozen=True)
class AtCommit:
    repo: str
    head_sha: str


def _failure(state: IssueState) -> tuple[str, str, str] | None:
    """(exception, message, description) when the repro fails by raising, else None."""
    result = state.reproduction.result if state.reproduction else {}
    exception = result.get("exception")
    if result.get("outcome") != "error" or not exception or exception == "SystemExit":
        return None
    return str(exception), str(result.get("message") or ""), state.reproduction.description


def why_no_test(state: IssueState) -> str | None:
    if state.stop or state.verdict != verdicts.REPRODUCES:
        return f"not needed ({state.verdict})"
    if state.reproduction and state.reproduction.flaky_ratio:
        return f"no test: the repro is flaky ({state.reproduction.flaky_ratio}); a unit test would pass sometimes"
    if _failure(state) is None:
        return ("no test: the repro shows the bug without raising (a printed value, a crash or a hang); "
                "a unit test needs a failing assertion or an exception")
    return None


def _spec(ctx: RunContext, state: IssueState, style: str) -> Any:
    exception, message, description = _failure(state)
    source = state.minimized.source if state.minimized else state.repro.source
    device = "cuda" if state.needs_cuda else "cpu"
    return issue_spec(source, repo=str(ctx.params["repo"]), number=int(ctx.params["issue"]),
                      title=str(state.issue.get("title") or ""), error=description, style=style,
                      devices=(device,) if device_of(source) else (), failing=(device,) if device_of(source) else ())


def _checks(run: Any, test: IssueTest, exception: str, message: str) -> list[TestCheck]:
    args = dict(devices=test.devices, failing=test.failing, style=test.style, exception=exception, message=message,
                timeout_s=TEST_TIMEOUT_S)
    unmarked = check_test(run, test.path, test.unmarked, test.name, marked=False, **args)
    if not unmarked.ok:
        return [unmarked]
    return [unmarked, check_test(run, test.path, test.marked, test.name, marked=True, **args)]


def verified(checks: list[TestCheck]) -> bool:
    return len(checks) == 2 and all(c.ok for c in checks)


def offer_test(ctx: RunContext, state: IssueState) -> StageResult:
    if why := why_no_test(state):
        return StageResult(summary=why, skipped=True)
    if not ctx.settings.offer_tests and not ctx.params.get(FORCE_TEST_PR):
        return StageResult(summary="not offered (SCRUB_OFFER_TESTS=false)", skipped=True)
    exception, message, _ = _failure(state)
    spec = _spec(ctx, state, default_style(str(ctx.params["repo"])))
    test = issue_test(spec, STANDALONE_PATH, None, title=f"Scrubbot's test for {ctx.params['repo']}#{ctx.params['issue']}.")
    settings = ctx.settings
    label = (state.reproduction.result or {}).get("environment") or runner.current_label(settings)
    with standalone_runner(settings.resolved_sandbox, settings.environment_map[label], settings.sandbox_memory_mb,
                           bool(settings.gpu)) as run:
        checks = _checks(run, test, exception, message)
    said = "; ".join(c.summary + ("" if c.ok else f" ({'; '.join(c.problems)})") for c in checks)
    return StageResult(summary=f"{test.name}: {said}"[:300], output={"offered_test": test, "test_checks": checks})


def place_test(ctx: RunContext, state: IssueState) -> StageResult:
    """`/scrub test`, first half (a repro worker): the test placed in the repository and verified there."""
    if not ctx.params.get(FORCE_TEST_PR):
        return StageResult(summary="not asked (`/scrub test` opens the pull request)", skipped=True)
    if state.offered_test is None or not verified(state.test_checks):
        why = why_no_test(state) or "the offered test did not fail and xfail as it must"
        return _no_pr(why.removeprefix("no test: "))
    repo = str(ctx.params["repo"])
    try:
        base, sha = default_branch(ctx, repo)
        job = AtCommit(repo, sha)
        worktree = ensure_checkout(ctx, job)
    except GitError as exc:
        return _no_pr(f"checkout failed: {exc}")
    try:
        return _place(ctx, state, worktree, base, sha)
    finally:
        drop_checkout(ctx, job)


def _no_pr(why: str, **extra: Any) -> StageResult:
    return StageResult(summary=f"no pull request: {why}"[:300], output={"test_pr": TestPR(False, why, **extra)})


def _place(ctx: RunContext, state: IssueState, worktree: Any, base: str, sha: str) -> StageResult:
    try:
        config = load_fuzz_config(worktree, gpu=bool(ctx.settings.gpu))
    except FuzzConfigError as exc:
        return _no_pr(str(exc))
    spec = _spec(ctx, state, config.style)
    placement = choose_test_file(worktree, tuple(operations(spec.program)), compiles=compiles(spec.program),
                                 style=config.style, configured=config.test_file)
    try:  # through the checkout's door: a link anywhere on the way is refused
        existing = worktree.read_text(placement.path) if placement.exists else None
    except UnsafePath:
        return _no_pr(f"{placement.path} goes through a symlink; not writing through it")
    try:
        test = issue_test(spec, placement.path, existing, title=f"Tests Scrubbot wrote for {ctx.params['repo']} issues.",
                          placement=placement.reason)
    except SyntaxError as exc:
        return _no_pr(f"{placement.path} cannot take the test: {exc}")
    exception, message, _ = _failure(state)
    checks = _checks(tree_runner(ctx, worktree), test, exception, message)
    where = {"base": base, "commit": sha, "path": test.path, "placement": placement.reason, "checks": checks}
    if not verified(checks):
        problems = "; ".join(p for c in checks for p in c.problems) or "no result"
        return _no_pr(f"in {test.path} the test does not fail, then xfail, as it must: {problems}", **where)
    worktree.write_text(test.path, test.marked)  # the repository's linter, as on every commit Scrubbot makes
    lint = lint_files(ctx, worktree, config.lint, [test.path])
    test = replace(test, marked=worktree.read_text(test.path))
    return StageResult(summary=f"{test.path}::{test.name} ({placement.reason}): "
                       + "; ".join([c.summary for c in checks] + [lint["summary"]]),
                       output={"placed_test": test, "test_pr": TestPR(False, lint=lint["summary"], **where)})


def open_test_pr(ctx: RunContext, state: IssueState) -> StageResult:
    """`/scrub test`, second half (GitHub I/O): the verified file committed, pushed, a draft PR."""
    pr, test = state.test_pr, state.placed_test
    if not ctx.params.get(FORCE_TEST_PR) or pr is None or test is None or pr.why:
        return StageResult(summary="nothing to open", skipped=True)
    if ctx.github is None:
        return StageResult(summary="offline: no pull request", skipped=True)
    repo, number = str(ctx.params["repo"]), int(ctx.params["issue"])
    branch = f"scrub/issue-{number}"
    job = AtCommit(repo, pr.commit)
    try:
        worktree = ensure_checkout(ctx, job)
        commit_files(worktree, {test.path: test.marked}, _commit_message(repo, number, test, pr.checks))
        push_branch(worktree, remote_for(ctx, repo), branch)
    except GitError as exc:
        return _no_pr(f"publishing the branch failed: {exc}")
    finally:
        drop_checkout(ctx, job)
    title = f"[scrub] Failing test for #{number}: {state.reproduction.description}"[:250]
    pull = ctx.github.upsert_pull(repo, head=branch, base=pr.base, title=title,
                                  body=pr_body(state, number, test, pr.checks), draft=True)
    opened = TestPR(True, url=pull.get("html_url"), number=pull.get("number"), branch=branch, base=pr.base,
                    commit=pr.commit, path=pr.path, placement=pr.placement, checks=pr.checks, lint=pr.lint)
    return StageResult(summary=f"{test.path}::{test.name} -> {opened.url}", output={"test_pr": opened})


def _commit_message(repo: str, number: int, test: IssueTest, checks: list[TestCheck]) -> str:
    return "\n".join([f"[scrub] xfail test for {repo}#{number}"[:72], "",
                      f"{test.path}::{test.name} reproduces {repo}#{number}: {test.reason}"[:300],
                      "It is marked as an expected failure (strict): once the bug is fixed it XPASSes.", "",
                      "Verified by Scrubbot in its sandbox: " + "; ".join(c.summary for c in checks) + "."]) + "\n"


def pr_body(state: IssueState, number: int, test: IssueTest, checks: list[TestCheck]) -> str:
    parts = [f"Adds a failing test for #{number}: {no_mentions(state.issue.get('title') or '')}",
             f"`{test.path}::{test.name}` ({test.placement}) reproduces the issue on PyTorch "
             f"{(state.reproduction.result or {}).get('torch_version') or 'the current release'}. Verified in "
             f"Scrubbot's sandbox, in this repository: " + "; ".join(no_mentions(c.summary) for c in checks) + "."
             + (f" Linted: {no_mentions(state.test_pr.lint)}." if state.test_pr and state.test_pr.lint else ""),
             fence(test.block, "python")]
    if diagnosis := markdown(state.diagnosis):
        parts.append(diagnosis)
    parts.append("Next: fix the bug; the test then XPASSes and fails the suite until the marker is removed.")
    return "\n\n".join(parts)


def comment_section(state: IssueState) -> str:
    """What the issue comment says about the test: it, and `/scrub test`; or the pull request."""
    pr = state.test_pr
    if pr is not None and pr.opened:
        return f"A draft pull request adds this failing test: {pr.url}"
    test = state.offered_test
    if test is None or not verified(state.test_checks):
        return f"No pull request was opened: {no_mentions(pr.why)}" if pr is not None else ""
    return ("A failing test, verified to fail with this error and to xfail with its marker:\n\n"
            + fence(test.block, "python")
            + "\n\n`/scrub test` (write permission) opens a draft pull request adding it to the test file that "
              "covers the operation.")


def report_section(state: IssueState) -> str:
    """The run report's part: the offered test, each check, and what `/scrub test` did."""
    test = state.offered_test
    if test is None:
        return ""
    lines = [f"`{test.name}` ({test.style} style):", "", fence(test.block, "python"), ""]
    lines += [f"- {'ok' if c.ok else 'NOT ok'}: {no_mentions(c.summary)}"
              + ("" if c.ok else f" ({no_mentions('; '.join(c.problems))})") for c in state.test_checks]
    pr = state.test_pr
    if pr is not None:
        lines.append(f"- `/scrub test`: {pr.url}" if pr.opened else f"- `/scrub test`: no pull request: {no_mentions(pr.why)}")
    return "\n".join(lines)
