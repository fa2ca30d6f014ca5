"""The progression run: one re-check of one tracked bug (an issue, or a draft PR's test).

    check -> recheck -> culprit -> culprit_range -> culprit_commits -> culprit_pr -> publish -> report

- check (default queue): the issue or PR is still open on GitHub (closed meanwhile: the run
  ends `closed`, nothing written); for a PR, the default branch's tip to test.
- recheck (repro-cpu, repro-gpu for CUDA): the repro on the newest build with the witness rule
  (`issues.py`), or the generated test on the tip (`pulls.py`).
- culprit (same queue, optional): for an issue's fix, the nightlies around it (`kit.culprit`).
- culprit_range, culprit_commits, culprit_pr (optional; `kit.culprit_stages`): the commits
  between those nightlies read from GitHub (default queue), probed (repro queue), and the PR
  that fixed it (default queue); for a PR's fix, `culprit_pr` lists the commits (and their
  PRs) between the failing commit and the tip. A repro worker holds no GitHub credential, so
  every GitHub read is on the default queue.
- publish (default): only on a change of state (`comments.transition`): one comment (marker
  `<!-- scrubbot:run=ID:progression -->`, edited on a retry), labels, and the close of a fixed
  issue (with a witness, on a trusted repro) or PR. The report is saved either way.
"""

from __future__ import annotations

from app.domain import RunStatus, Verdict
from app.engine.git.repo import remote_branch_tip
from app.engine.report.render import RunReport, StageLine, render_run_report
from app.engine.verdict.culprit import describe
from app.github.port import comment_marker
from app.pipelines.base import CPU_QUEUE, DEFAULT_QUEUE, GPU_QUEUE, RunContext, Stage, StageResult
from app.pipelines.kit.checkout import remote_for
from app.pipelines.kit.culprit_stages import commits_stage, name_pr, range_stage
from app.pipelines.kit.narrowing import PULLS, waits_for
from app.pipelines.kit.routed import Routed, on_default
from app.pipelines.progression import comments, issues, pulls
from app.pipelines.progression.state import ProgressionState

ISSUE, PULL = "issue", "pull"


def _code_queue(state: ProgressionState) -> str:
    if state.verdict == Verdict.closed:
        return DEFAULT_QUEUE
    return GPU_QUEUE if state.needs_gpu else CPU_QUEUE


def check(ctx: RunContext, state: ProgressionState) -> StageResult:
    params = ctx.params
    repo, number, target = str(params["repo"]), int(params["number"]), params.get("target", ISSUE)
    gpu = bool(params.get("needs_cuda") or params.get("needs_gpu"))
    if ctx.github is None:
        return StageResult(summary="no GitHub to re-check against", output={"verdict": Verdict.inconclusive},
                           end=RunStatus.skipped, verdict=Verdict.inconclusive)
    if target == PULL:
        pull = ctx.github.get_pull(repo, number)
        if pull.get("state") != "open":
            return StageResult(summary=f"{repo}#{number} is {'merged' if pull.get('merged') else 'closed'}: "
                                       "nothing to re-check", output={"verdict": Verdict.closed},
                               end=RunStatus.skipped, verdict=Verdict.closed)
        base = str((pull.get("base") or {}).get("ref") or params.get("base") or "main")  # where the PR points
        head = remote_branch_tip(remote_for(ctx, repo), base)
        if not head:
            return StageResult(summary=f"{repo} has no branch {base}", output={"verdict": Verdict.inconclusive},
                               end=RunStatus.skipped, verdict=Verdict.inconclusive)
        return StageResult(summary=f"PR open; {base} is at {head[:12]}", output={"head": head, "needs_gpu": gpu})
    issue = ctx.github.get_issue(repo, number)
    if issue.get("state") != "open":
        return StageResult(summary=f"{repo}#{number} is closed: nothing to re-check", output={"verdict": Verdict.closed},
                           end=RunStatus.skipped, verdict=Verdict.closed)
    build = params["build"]
    return StageResult(summary=f"issue open; re-checking on {build['label']} ({params.get('reason')})",
                       output={"needs_gpu": gpu})


def recheck(ctx: RunContext, state: ProgressionState) -> StageResult:
    if ctx.params.get("target") == PULL:
        return pulls.recheck(ctx, ctx.params, state.head)
    return issues.recheck(ctx, ctx.params)


def culprit(ctx: RunContext, state: ProgressionState) -> StageResult:
    if state.verdict != Verdict.fixed:
        return StageResult(summary="not needed: not fixed", skipped=True)
    if ctx.params.get("target") == PULL:
        return StageResult(summary="a PR's fix range is read from GitHub by culprit_pr", skipped=True)
    found = issues.culprit(ctx, ctx.params)
    if found is None:
        return StageResult(summary="no range: the build it last reproduced on is the one checked", skipped=True)
    return StageResult(summary=describe(found[0], str(ctx.params["repo"])),
                       output={"culprit": found[0], "narrowing": found[1]})


def _pr_work(state: ProgressionState) -> bool:
    return waits_for(state.narrowing, PULLS) or (state.verdict == Verdict.fixed and bool(state.head))


def culprit_pr(ctx: RunContext, state: ProgressionState) -> StageResult:
    """The PR that fixed an issue (`kit.culprit_stages.name_pr`), or the commits a PR's fix is among."""
    if ctx.params.get("target") == PULL:
        note = pulls.fix_range(ctx, ctx.params, state.head)
        return StageResult(summary=note or "no range to list", output={"range_note": note})
    return name_pr(ctx, state)


def _may_close(ctx: RunContext, state: ProgressionState) -> bool:
    """A fix closes an issue only with a witness and on a repro the reporter or a triager posted."""
    return state.verdict == Verdict.fixed and state.witness_holds and bool(ctx.params.get("trusted"))


def publish(ctx: RunContext, state: ProgressionState) -> StageResult:
    params = ctx.params
    repo, number, target = str(params["repo"]), int(params["number"]), params.get("target", ISSUE)
    change = comments.transition(params.get("last_state"), state.verdict)
    if not change:
        return StageResult(summary=f"no change ({params.get('last_state')} -> {state.verdict}): nothing written",
                           output={"transition": ""})
    marker, done = comment_marker(ctx.run_id, "progression"), []
    if target == PULL:
        if state.verdict != Verdict.fixed:
            return StageResult(summary=f"{change}: nothing to write on a PR", output={"transition": ""})
        ctx.github.upsert_comment(repo, number, marker, comments.pull_comment(params, state))
        ctx.github.close_pull(repo, number)
        return StageResult(summary=f"{change}: commented, closed the PR", output={"transition": change,
                                                                                  "published": ["comment", "closed"]})
    closes = _may_close(ctx, state)
    ctx.github.upsert_comment(repo, number, marker, comments.issue_comment(params, state, closes))
    done.append("comment")
    add, remove = {
        Verdict.fixed: ([comments.FIXED_LABEL], [comments.PASSES_NOW_LABEL]),
        Verdict.passes_now: ([comments.PASSES_NOW_LABEL], []),
        Verdict.reproduces: ([], [comments.PASSES_NOW_LABEL]),
    }[state.verdict]
    ctx.github.update_labels(repo, number, add=add, remove=remove)
    done.append("labels")
    if state.verdict == Verdict.fixed and closes:
        ctx.github.close_issue(repo, number, reason="completed")
        done.append("closed")
    return StageResult(summary=f"{change}: {', '.join(done)}", output={"transition": change, "published": done})


def report(ctx: RunContext, state: ProgressionState) -> StageResult:
    """The run's own record, last (as in every kind): what the re-check showed and what it wrote."""
    change = comments.transition(ctx.params.get("last_state"), state.verdict)
    ctx.save_artifact("report.md", "report", _report(ctx, state, change))
    return StageResult(summary=f"{state.verdict}: {change or 'no change'}")


def _report(ctx: RunContext, state: ProgressionState, change: str) -> str:
    params, build = ctx.params, ctx.params.get("build") or {}
    where = f"{params.get('repo')}#{params.get('number')}"
    facts = [("Tracked", f"{params.get('target', ISSUE)} {where}, found by run {params.get('source_run')}"),
             ("Reason", str(params.get("reason") or "")), ("Build", str(build.get("label") or state.head[:12])),
             ("Verdict", str(state.verdict)), ("Change", change or "none: nothing written")]
    if state.witness:
        facts.append(("Witness", state.witness))
    stages = [StageLine(s.stage, s.status, s.duration_s, s.summary) for s in ctx.stage_summaries()]
    report = RunReport(title=f"Re-check of {where}: {params.get('title', '')}",
                       status="Success" if state.verdict != Verdict.inconclusive else "Partial",
                       summary=f"{state.verdict} on {build.get('label') or state.head[:12]}", facts=facts,
                       stages=stages, next_steps=[NEXT_STEPS.get(str(state.verdict), "Look at the run log.")])
    return render_run_report(report)


NEXT_STEPS = {
    Verdict.reproduces: "Nothing: it is re-checked on the next build.",
    Verdict.fixed: "Nothing: closed as fixed (reopen it if the bug is seen again).",
    Verdict.passes_now: "Confirm the fix by hand and close it.",
    Verdict.inconclusive: "Look at why the re-check could not tell; it is tried again on the next build.",
    Verdict.closed: "Nothing: it was closed on GitHub.",
}

STAGES: list[Stage] = [
    Stage("check", check, state=ProgressionState),
    Stage("recheck", recheck, queue=_code_queue, state=ProgressionState),
    Stage("culprit", culprit, queue=_code_queue, optional=True, state=ProgressionState),
    range_stage(ProgressionState, idle=on_default),
    commits_stage(ProgressionState, _code_queue, on_default, issues.search_of),
    Routed(_pr_work, culprit_pr, on_default, on_default, "no commit or range to name PRs for").stage(
        "culprit_pr", ProgressionState),
    Stage("publish", publish, state=ProgressionState),
    Stage("report", report, state=ProgressionState),
]
