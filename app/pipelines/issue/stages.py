"""The issue pipeline: seed `001` (scrub-issue) as checkpointed stages.

    fetch -> select -> triage -> review -> reproduce -> bisect -> culprit_range -> culprit_commits
          -> minimize -> stress -> diagnose -> test -> place_test -> culprit_pr -> open_test_pr
          -> publish -> report

(`culprit_range`, `culprit_commits`, `culprit_pr`: `app.pipelines.kit.culprit_stages`, the
commits between the nightlies `bisect` found and the PR among them; `diagnose`: `diagnosis.py`,
the catalog's experiments; `test`, `place_test`, `open_test_pr`: `testcase.py`, the failing
test offered in the comment and, on `/scrub test`, its pull request.)

Run params (set by the webhook route, the CLI or `/scrub` commands): `repo`, `issue`, and
optionally `approved_by`, `force_bisect`, `force_minimize`, `force_stress` (`FORCE_BISECT`,
`FORCE_MINIMIZE`, `stress.FORCE_STRESS`: set by `/scrub bisect`, `/scrub minimize` and `/scrub
stress`, the words this kind declares in `__init__`).

Every stage gets the typed `IssueState` (`state.py`); its output (JSON or the typed parts
the state declares) is merged into the stored state. A triage decision that stops the
run (closed, feature, tracker, no repro, ...) sets `stop`; later code-running stages are then
recorded as skipped, and `publish` + `report` still run so the labels and any notice land.
Every kind ends the same way: `publish` (what goes out: here the comment and labels, in the CI
and fuzz jobs the branch and the draft PR), then `report` (the run's own record, last).
Only `publish` (and `review`, for its approval notice) writes to GitHub; a closed issue gets
no write at all. The stages that run code (`reproduce` to `place_test`) run on a repro queue,
where a worker holds no GitHub credential: the culprit search's GitHub reads are `culprit_range`
and `culprit_pr`, on the default queue. The comment carries `comment_marker(run_id, "issue")`,
so a retry of the run edits it instead of adding a second one.
"""

from __future__ import annotations

import platform as host_platform
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from app import approvals
from app.domain import RunStatus, Verdict
from app.engine.verdict import bisect as bisection
from app.engine.verdict import classify as verdicts
from app.engine.issue import markdown as issues
from app.engine.issue import selection as choose
from app.engine.issue.reported import reported_version
from app.engine.verdict import witness as witnessing
from app.engine.verdict.values import stated_values
from app.engine.issue import loose, repro_facts
from app.engine.issue import review as security
from app.engine.report.render import Notice, render_notice
from app.engine.verdict.classify import FIXED, REPRODUCES
from app.engine.verdict.culprit import RELEASE
from app.engine.verdict.culprit import describe as describe_culprit
from app.github.permissions import may_write, role_of
from app.github.port import comment_marker
from app.pipelines.issue import culprits, diagnosis, evidence, runner, testcase
from app.pipelines.base import CPU_QUEUE, DEFAULT_QUEUE, GPU_QUEUE, RunContext, Stage, StageResult
from app.pipelines.kit.culprit_stages import commits_stage, pr_stage, range_stage
from app.pipelines.kit.routed import on_default
from app.pipelines.issue import dedup
from app.pipelines.issue.report import build_report, publish_plan
from app.pipelines.issue.state import IssueState
from app.pipelines.issue.stress import stress
from app.pipelines.state import plain

MINIMAL_LINES = 20  # the seed: "under ~20 lines of non-blank non-import code" is minimal enough
BISECT_K = 2  # probes per round: splits the range into thirds
REPRO_LOG_LINES = 40  # lines of the repro's output copied into the run log
FORCE_BISECT, FORCE_MINIMIZE = "force_bisect", "force_minimize"  # run params: redo that stage even if not needed


def _target(ctx: RunContext) -> tuple[str, int]:
    return str(ctx.params["repo"]), int(ctx.params["issue"])


def _skip(state: IssueState) -> StageResult | None:
    """A code-running stage is skipped once triage stopped the run."""
    if state.stop:
        return StageResult(summary=f"not needed ({state.verdict})", skipped=True)
    return None


def _code_queue(state: IssueState) -> str:
    if state.stop:
        return DEFAULT_QUEUE
    return GPU_QUEUE if state.needs_cuda else CPU_QUEUE


def _slim(post: dict[str, Any]) -> dict[str, Any]:
    keys = ("number", "title", "body", "state", "state_reason", "html_url", "created_at", "author_association", "id")
    user = post.get("user") or {}
    labels = [lab.get("name") if isinstance(lab, dict) else lab for lab in post.get("labels") or []]
    return {k: post.get(k) for k in keys if k in post} | {
        "user": {"login": user.get("login", ""), "type": user.get("type", "User")}, "labels": labels,
    }


TRIAGE_ROLES = ("admin", "maintain", "write", "triage")  # may apply the label, and so approve


def fetch(ctx: RunContext, state: IssueState) -> StageResult:
    """The issue and its comments; first, the label's author must be allowed to apply it.

    The `scrub` label is the approval to run a repro with a clean security scan, so it counts
    only from someone with triage or write permission (checked through the API, not taken from
    the payload); anyone else's label is ignored, with no write to GitHub."""
    repo, number = _target(ctx)
    labeler = ctx.params.get("labeled_by")
    role = None
    if labeler:
        role = ctx.github.permission(repo, labeler)
        if role not in TRIAGE_ROLES:
            return StageResult(summary=f"ignored: the label was added by {labeler}, whose role is {role}",
                               output={"label_role": role}, end=RunStatus.skipped, verdict=Verdict.ignored)
    issue = ctx.github.get_issue(repo, number)
    comments = ctx.github.list_issue_comments(repo, number)
    summary = f"{repo}#{number}: {issue.get('title', '')!r}, {len(comments)} comments"
    return StageResult(summary=summary, output={"issue": _slim(issue), "comments": [_slim(c) for c in comments],
                                                "label_role": role})


def _poster_words(issue: dict[str, Any], comments: list[dict[str, Any]]) -> list[str]:
    """The original poster's words: the issue's title and body, then their posts among `comments`
    (the caller says which comments count: the reported error skips bots' and Scrubbot's own)."""
    poster = (issue.get("user") or {}).get("login")
    by_poster = [c.get("body") or "" for c in comments if (c.get("user") or {}).get("login") == poster]
    return [f"{issue.get('title') or ''}\n\n{issue.get('body') or ''}", *by_poster]


def select(ctx: RunContext, state: IssueState) -> StageResult:
    issue, comments = state.issue, state.comments
    candidates = issues.repro_candidates(issue, comments)
    op = (issue.get("user") or {}).get("login", "")
    claims = [c for c in issues.human_posts(issue, comments)[1:] if issues.duplicate_of([c], None)]  # may they say so?
    trusted = evidence.trusted_commenters(ctx, candidates, op, TRIAGE_ROLES, also=claims)
    chosen = choose.select_repro(candidates, set(trusted))
    others = choose.alternates(candidates, chosen, set(trusted))
    posts = issues.human_posts(issue, comments)
    images = chosen is None and any(issues.has_images(p.get("body")) for p in posts)
    # The reported error: first in the chosen repro's post, then in the poster's own words
    # (bots' and Scrubbot's comments are not read), then a class the title names.
    chosen_post = next((p for p in posts if chosen and p.get("html_url") == chosen.url), {})
    words = _poster_words(issue, posts[1:])
    reported = issues.reported_error(chosen_post.get("body"), *words, title=issue.get("title"))
    stated = stated_values("\n".join(words), title=issue.get("title") or "")
    expected = loose.expected_exception(issue.get("body"))
    asks_for_error = loose.asks_for_error(issue.get("title"))
    if reported and reported.kind == "exception" and asks_for_error:
        # "... instead of raising": the error quoted is the one asked for, so raising it is no reproduction
        expected, reported = reported.exception or expected, None
    summary = (f"repro by {chosen.author} ({chosen.where}, line {chosen.line}, {chosen.lines} lines) of "
               f"{len(candidates)} candidates: {chosen.why}" if chosen
               else "no repro" + (" (only images)" if images else ""))
    if reported:
        summary += f"; reported: {reported.expect}"
    elif expected and asks_for_error:
        summary += f"; asks for a {expected} (the title says it is missing)"
    if stated:
        summary += f"; prints {stated.actual!r}, expected {stated.expected!r}"
    return StageResult(summary=summary, output={
        "repro": chosen,
        "candidates": [{"author": c.author, "url": c.url, "lines": c.lines, "where": c.where, "line": c.line,
                        "kind": c.kind, "role": c.role} for c in candidates],
        "alternates": others,
        "trusted": trusted,
        "images_only": images,
        "reported": reported,
        "stated_values": stated,
        "reported_version": reported_version("\n".join(words)),
        "expected_exception": expected,
    })


def triage(ctx: RunContext, state: IssueState) -> StageResult:
    repro = state.repro
    decision = issues.triage(state.issue, repro, images=state.images_only,
                             comments=issues.human_posts(state.issue, state.comments)[1:],
                             trusted=set(state.trusted) if getattr(ctx, "github", None) is not None else None)
    output: dict[str, Any] = {"triage": decision, "needs_cuda": decision.needs_cuda}
    if decision.cpu_source and repro is not None:
        output["repro"] = replace(repro, source=decision.cpu_source, cuda_dropped=True)
    if decision.stops:
        output |= {"stop": True, "verdict": decision.decision}
    return StageResult(summary=f"{decision.decision}: {decision.reason}", output=output)


def review(ctx: RunContext, state: IssueState) -> StageResult:
    """Run a repro with a clean scan when a triager labelled the issue (whoever wrote the
    repro) or its author has write permission (admin, maintain, write: being a collaborator is
    not enough, and an unanswered check is no permission); anything with findings waits for
    `/scrub approve`. `collaborator` in the output: the author may write."""
    if skipped := _skip(state):
        return skipped
    repo, number = _target(ctx)
    repro = state.repro
    findings = [f.to_dict() for f in security.scan(repro.source)]
    role = role_of(ctx.github, repo, repro.author or "")
    collaborator = may_write(role)
    code = approvals.digest(repro.source)  # an approval is of this exact code (`app.approvals`)
    output = {"findings": findings, "collaborator": collaborator, approvals.OUTPUT_KEY: code}
    approved_by = ctx.params.get(approvals.BY)
    if approved_by and approvals.approved(ctx.params, code):
        return StageResult(summary=f"approved by {approved_by} ({len(findings)} findings)",
                           output=output | {"approved_by": approved_by})
    if state.label_role in TRIAGE_ROLES and not findings:
        who = ctx.params.get("labeled_by")
        return StageResult(summary=f"labelled by {who} ({state.label_role}); no findings", output=output)
    if collaborator and not findings:
        return StageResult(summary=f"{repro.author}'s role is {role}; no findings", output=output)
    why = f"{len(findings)} findings" if findings else f"{repro.author}'s role is {role}, not write"
    if approved_by:  # approved, but other code: the issue changed since (a retry, a restart)
        why += f"; {approved_by} approved other code (sha256 {str(ctx.params.get(approvals.DIGEST))[:12]}), not this"
    notice = render_notice(Notice(Verdict.awaiting_approval, source_url=repro.url, findings=findings,
                                  run_url=_run_url(ctx)))
    ctx.github.upsert_comment(repo, number, comment_marker(ctx.run_id, "issue"), notice)
    return StageResult(summary=f"awaiting approval: {why}", output=output, wait=True,
                       verdict=Verdict.awaiting_approval)


def _run_url(ctx: RunContext) -> str | None:
    base = ctx.settings.public_url or ""
    return f"{base.rstrip('/')}/runs/{ctx.run_id}" if base else None


def reproduce(ctx: RunContext, state: IssueState) -> StageResult:
    if skipped := _skip(state):
        return skipped
    if state.needs_cuda and not ctx.settings.gpu:
        return StageResult(summary="needs CUDA and this worker has no GPU", skipped=True,
                           output={"stop": True, "verdict": Verdict.unavailable_hardware, "hardware": "a CUDA GPU"})
    label = runner.current_label(ctx.settings)
    repro = state.repro
    older = witnessing.release_to_try(list(ctx.settings.environment_map), label, state.reported_version)
    result = evidence.run_repro(ctx, state, repro, label, older)
    output: dict[str, Any] = {}
    if result.verdict != verdicts.REPRODUCES and (switch := evidence.try_alternates(ctx, state, label, TRIAGE_ROLES)):
        repro, why = switch
        result = replace(evidence.run_repro(ctx, state, repro, label, older), switched_from=why)
        output["repro"] = repro
    printed = "\n".join(str(result.result.get("output_tail") or "").splitlines()[-REPRO_LOG_LINES:])
    if printed:  # the run log shows what the repro printed, not only the stage summaries
        ctx.log(f"repro output on {label} (last {REPRO_LOG_LINES} lines at most):\n{printed}")
    # Every comment by the poster counts here: more of their words only make it more careful.
    platform = repro_facts.reported_platform("\n".join(_poster_words(state.issue, state.comments)),
                                             machine=host_platform.machine())
    if result.verdict in (verdicts.FIXED, verdicts.DIFFERENT) and platform:
        # Passing (or failing otherwise) on this Linux worker proves nothing about a failure seen
        # on Windows or macOS (a toolchain, a path, a backend): never close such an issue as fixed.
        result = replace(result, verdict=verdicts.INCONCLUSIVE, platform=platform,
                         description=f"{result.description} here, but the report is from {platform}")
    if result.verdict == verdicts.FIXED:
        witness = evidence.witness(ctx, state, repro, older)
        output["witness"] = witness
        if not witness.holds:
            result = replace(result, verdict=verdicts.PASSES_NOW)
    ratio = f", flaky {result.flaky_ratio}" if result.flaky_ratio else ""
    summary = f"{result.verdict} on {label}: {result.description} ({result.runs} runs{ratio})"
    if output.get("witness"):
        summary += f"; witness: {output['witness'].kind} ({output['witness'].why})"
    output |= {"reproduction": result, "verdict": result.verdict}
    if result.verdict == verdicts.UNAVAILABLE_HARDWARE:  # the run stopped for want of a GPU
        output["hardware"] = "a CUDA GPU"
    return StageResult(summary=summary, output=output)


def bisect(ctx: RunContext, state: IssueState) -> StageResult:
    """When it passes now (or on `/scrub bisect`): the first environment where the outcome changes,
    then (`culprits.py`) the nightlies between the two releases around it; the commits and the
    PR are the `culprit_*` stages' (module docstring)."""
    if skipped := _skip(state):
        return skipped
    envs = ctx.settings.environment_map
    wanted = state.verdict == FIXED or ctx.params.get(FORCE_BISECT)
    if len(envs) < 2 or not wanted or state.verdict not in (FIXED, REPRODUCES):
        return StageResult(summary="not needed", skipped=True)
    source, reported = state.repro.source, plain(state.reported)
    labels = list(envs)
    plan = runner.bisect_plan(plain(state.reproduction))  # clean runs that make a release "absent"
    with ThreadPoolExecutor(max_workers=BISECT_K) as pool:
        found = bisection.bisect(
            labels,
            lambda label: runner.probe(ctx.settings, source, reported, label, plan,
                                       expected_exception=state.expected_exception),
            k=BISECT_K,
            known={labels[-1]: state.verdict == REPRODUCES},
            run_all=lambda probe, batch: list(pool.map(probe, batch)),
        )
    summary = bisection.describe_change(found, found.probes.get)
    output: dict[str, Any] = {"bisect": found, "bisect_plan": plan}
    if narrowed := culprits.narrow(ctx, state, found, plan):
        output["culprit"], output["narrowing"] = narrowed
        if narrowed[0].level != RELEASE:
            summary += f"; {describe_culprit(narrowed[0], str(ctx.params['repo']))}"
    return StageResult(summary=summary, output=output)


def minimize(ctx: RunContext, state: IssueState) -> StageResult:
    """When it reproduces deterministically and is not already minimal (or on `/scrub minimize`)."""
    if skipped := _skip(state):
        return skipped
    reproduction = state.reproduction
    source = state.repro.source
    forced = bool(ctx.params.get(FORCE_MINIMIZE))
    if state.verdict != REPRODUCES or (reproduction and reproduction.flaky_ratio and not forced):
        return StageResult(summary="not needed: it does not reproduce deterministically", skipped=True)
    if (reproduction.result or {}).get("exception") == "SystemExit":
        # The failure is the script's own exit code (or its BUG print): every smaller script
        # that exits the same way "keeps" it, down to `raise SystemExit(1)`.
        return StageResult(summary="not needed: the failure is the script's own exit code, which any "
                                   "smaller script could fake", skipped=True)
    if issues.code_lines(source) <= MINIMAL_LINES and not forced:
        return StageResult(summary=f"already minimal ({issues.code_lines(source)} lines)", skipped=True)
    label = reproduction.result["environment"]
    result = runner.minimize_repro(ctx.settings, source, label)
    if result is None:
        return StageResult(summary="nothing smaller keeps the bug", output={"minimized": None})
    return StageResult(summary=f"{result.original_lines} -> {result.final_lines} lines",
                       output={"minimized": result})


def publish(ctx: RunContext, state: IssueState) -> StageResult:
    """The only GitHub writes: one comment (edited on retry), labels in one call, maybe close.
    What to write is decided from the state (`report.publish_plan`) and kept as `publish`."""
    same = dedup.same_failures(ctx, state)  # cross-report dedup: "Same failure as #N"
    plan = dedup.with_same_failures(publish_plan(state), same, ctx.params.get("repo") or "", ctx.settings.public_url)
    if ctx.github is None or plan.nothing:
        return StageResult(summary="nothing to write" if ctx.github else "offline", skipped=True,
                           output={"publish": plan, "same_failures": same})
    repo, number = _target(ctx)
    done = []
    if plan.comment:
        ctx.github.upsert_comment(repo, number, comment_marker(ctx.run_id, "issue"), plan.comment)
        done.append("comment")
    if plan.add_labels or plan.remove_labels:
        ctx.github.update_labels(repo, number, add=plan.add_labels, remove=plan.remove_labels)
        done.append("labels")
    if plan.close:
        ctx.github.close_issue(repo, number, reason="completed")
        done.append("closed")
    return StageResult(summary=", ".join(done) or "nothing to write",
                       output={"publish": plan, "published": done, "same_failures": same})


def report(ctx: RunContext, state: IssueState) -> StageResult:
    """The run's own record, last (as in every kind): the report with what was published, the repros."""
    built = build_report(ctx, state, [stage.name for stage in STAGES])
    line = dedup.sentence(state.same_failures, ctx.params.get("repo") or "", ctx.settings.public_url)
    ctx.save_artifact("report.md", "report", built.report + (f"\n## Same Failure\n\n{line}\n" if line else ""))
    if state.repro:
        ctx.save_artifact("repro_original.py", "repro", state.repro.source)
    if state.minimized:
        ctx.save_artifact("repro_minimized.py", "repro", state.minimized.source)
    return StageResult(summary=built.headline)


STAGES: list[Stage] = [
    Stage("fetch", fetch, state=IssueState),
    Stage("select", select, state=IssueState),
    Stage("triage", triage, state=IssueState),
    Stage("review", review, state=IssueState),
    Stage("reproduce", reproduce, queue=_code_queue, state=IssueState),
    Stage("bisect", bisect, queue=_code_queue, optional=True, state=IssueState),
    range_stage(IssueState, idle=_code_queue),
    commits_stage(IssueState, _code_queue, _code_queue, lambda ctx, state: culprits.search_of(state)),
    Stage("minimize", minimize, queue=_code_queue, optional=True, state=IssueState),
    Stage("stress", stress, queue=_code_queue, optional=True, state=IssueState),
    Stage("diagnose", diagnosis.diagnose, queue=_code_queue, optional=True, state=IssueState),
    Stage("test", testcase.offer_test, queue=_code_queue, optional=True, state=IssueState),
    Stage("place_test", testcase.place_test, queue=_code_queue, optional=True, state=IssueState),
    # After the code stages, so that a run with a PR to name comes back to the trusted side once.
    pr_stage(IssueState, idle=on_default),
    Stage("open_test_pr", testcase.open_test_pr, optional=True, state=IssueState),
    Stage("publish", publish, state=IssueState),
    Stage("report", report, state=IssueState),
]
