"""The issue pipeline: seed `001` (scrub-issue) as checkpointed stages.

    fetch -> select -> triage -> review -> reproduce -> bisect -> minimize -> report -> publish

Run params (set by the webhook route, the CLI or `/scrub` commands): `repo`, `issue`, and
optionally `approved_by`, `force_bisect`, `force_minimize`.

Every stage's output is plain JSON merged into the state. A triage decision that stops the
run (closed, feature, tracker, no repro, ...) sets `stop`; later code-running stages are then
recorded as skipped, and `report` + `publish` still run so the labels and any notice land.
Only `publish` (and `review`, for its approval notice) writes to GitHub; a closed issue gets
no write at all. The comment carries `comment_marker(run_id, "issue")`, so a retry of the
run edits it instead of adding a second one.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from app.engine.verdict import bisect as bisection
from app.engine.verdict import classify as verdicts
from app.engine.issue import markdown as issues
from app.engine.issue import loose, repro_facts
from app.engine.issue import review as security
from app.engine.report.render import Notice, render_notice
from app.engine.verdict.classify import FIXED, REPRODUCES
from app.github.port import comment_marker
from app.pipelines.issue import runner as runner
from app.pipelines.base import CPU_QUEUE, DEFAULT_QUEUE, GPU_QUEUE, RunContext, Stage, StageResult, State
from app.pipelines.issue.report import build_report

MINIMAL_LINES = 20  # the seed: "under ~20 lines of non-blank non-import code" is minimal enough
BISECT_K = 2  # probes per round: splits the range into thirds
REPRO_LOG_LINES = 40  # lines of the repro's output copied into the run log


def _target(ctx: RunContext) -> tuple[str, int]:
    return str(ctx.params["repo"]), int(ctx.params["issue"])


def _skip(state: State) -> StageResult | None:
    """A code-running stage is skipped once triage stopped the run."""
    if state.get("stop"):
        return StageResult(summary=f"not needed ({state.get('verdict')})", skipped=True)
    return None


def _code_queue(state: State) -> str:
    if state.get("stop"):
        return DEFAULT_QUEUE
    return GPU_QUEUE if state.get("needs_cuda") else CPU_QUEUE


def _slim(post: dict[str, Any]) -> dict[str, Any]:
    keys = ("number", "title", "body", "state", "state_reason", "html_url", "created_at", "author_association", "id")
    user = post.get("user") or {}
    labels = [lab.get("name") if isinstance(lab, dict) else lab for lab in post.get("labels") or []]
    return {k: post.get(k) for k in keys if k in post} | {
        "user": {"login": user.get("login", ""), "type": user.get("type", "User")}, "labels": labels,
    }


TRIAGE_ROLES = ("admin", "maintain", "write", "triage")  # may apply the label, and so approve


def fetch(ctx: RunContext, state: State) -> StageResult:
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
                               output={"label_role": role}, end="skipped", verdict="ignored")
    issue = ctx.github.get_issue(repo, number)
    comments = ctx.github.list_issue_comments(repo, number)
    summary = f"{repo}#{number}: {issue.get('title', '')!r}, {len(comments)} comments"
    return StageResult(summary=summary, output={"issue": _slim(issue), "comments": [_slim(c) for c in comments],
                                                "label_role": role})


def _reporter_texts(issue: State, posts: list[State], chosen: issues.Repro | None) -> list[str | None]:
    """Where the reported error is looked for, in order: the chosen repro's post, the issue's
    title and body, then the original poster's comments."""
    chosen_post = next((p for p in posts if chosen and p.get("html_url") == chosen.url), {})
    poster = (issue.get("user") or {}).get("login")
    by_poster = [p.get("body") for p in posts[1:] if (p.get("user") or {}).get("login") == poster]
    return [chosen_post.get("body"), f"{issue.get('title', '')}\n\n{issue.get('body') or ''}", *by_poster]


def select(ctx: RunContext, state: State) -> StageResult:
    issue, comments = state["issue"], state["comments"]
    candidates = issues.repro_candidates(issue, comments)
    chosen = issues.select_repro(candidates)
    posts = issues.human_posts(issue, comments)
    images = chosen is None and any(issues.has_images(p.get("body")) for p in posts)
    reported = issues.reported_error(*_reporter_texts(issue, posts, chosen))
    expected = loose.expected_exception(issue.get("body"))
    summary = (f"repro by {chosen.author} ({chosen.lines} lines) of {len(candidates)} candidates" if chosen
               else "no repro" + (" (only images)" if images else ""))
    if reported:
        summary += f"; reported: {reported.expect}"
    return StageResult(summary=summary, output={
        "repro": chosen.to_dict() if chosen else None,
        "candidates": [{"author": c.author, "url": c.url, "lines": c.lines} for c in candidates],
        "images_only": images,
        "reported": reported.to_dict() if reported else None,
        "expected_exception": expected,
    })


def triage(ctx: RunContext, state: State) -> StageResult:
    repro = issues.Repro.from_dict(state["repro"]) if state.get("repro") else None
    decision = issues.triage(state["issue"], repro, images=state.get("images_only", False))
    output: State = {"triage": decision.to_dict(), "needs_cuda": decision.needs_cuda}
    if decision.cpu_source and repro is not None:
        output["repro"] = repro.to_dict() | {"source": decision.cpu_source, "cuda_dropped": True}
    if decision.stops:
        output |= {"stop": True, "verdict": decision.decision}
    return StageResult(summary=f"{decision.decision}: {decision.reason}", output=output)


def review(ctx: RunContext, state: State) -> StageResult:
    """Run a repro with a clean scan when a maintainer labelled the issue (whoever wrote the
    repro) or a collaborator wrote it; anything with findings waits for `/scrub approve`."""
    if skipped := _skip(state):
        return skipped
    repo, number = _target(ctx)
    repro = state["repro"]
    findings = [f.to_dict() for f in security.scan(repro["source"])]
    collaborator = bool(ctx.github.is_collaborator(repo, repro["author"])) if repro["author"] else False
    output = {"findings": findings, "collaborator": collaborator}
    approved_by = ctx.params.get("approved_by")
    if approved_by:
        return StageResult(summary=f"approved by {approved_by} ({len(findings)} findings)",
                           output=output | {"approved_by": approved_by})
    if state.get("label_role") in TRIAGE_ROLES and not findings:
        who = ctx.params.get("labeled_by")
        return StageResult(summary=f"labelled by {who} ({state['label_role']}); no findings", output=output)
    if collaborator and not findings:
        return StageResult(summary=f"{repro['author']} is a collaborator; no findings", output=output)
    why = f"{len(findings)} findings" if findings else f"{repro['author']} is not a collaborator"
    notice = render_notice(Notice("awaiting-approval", source_url=repro["url"], findings=findings,
                                  run_url=_run_url(ctx)))
    ctx.github.upsert_comment(repo, number, comment_marker(ctx.run_id, "issue"), notice)
    return StageResult(summary=f"awaiting approval: {why}", output=output, wait=True, verdict="awaiting-approval")


def _run_url(ctx: RunContext) -> str | None:
    base = ctx.settings.public_url or ""
    return f"{base.rstrip('/')}/runs/{ctx.run_id}" if base else None


def reproduce(ctx: RunContext, state: State) -> StageResult:
    if skipped := _skip(state):
        return skipped
    if state.get("needs_cuda") and not ctx.settings.gpu:
        return StageResult(summary="needs CUDA and this worker has no GPU", skipped=True,
                           output={"stop": True, "verdict": "unavailable-hardware", "hardware": "a CUDA GPU"})
    label = runner.current_label(ctx.settings)
    source = state["repro"]["source"]
    result = runner.reproduce(ctx.settings, source, state.get("reported"), label,
                              self_checking=repro_facts.checks_itself(source),
                              expected_exception=state.get("expected_exception"))
    printed = "\n".join(str(result["result"].get("output_tail") or "").splitlines()[-REPRO_LOG_LINES:])
    if printed:  # the run log shows what the repro printed, not only the stage summaries
        ctx.log(f"repro output on {label} (last {REPRO_LOG_LINES} lines at most):\n{printed}")
    platform = repro_facts.reported_platform(_issue_text(state))
    if result["verdict"] == verdicts.FIXED and platform:
        # Passing on this Linux worker proves nothing about a failure seen on Windows or macOS
        # (a toolchain, a path, a backend): never close such an issue as fixed.
        result = result | {"verdict": verdicts.INCONCLUSIVE, "platform": platform,
                           "description": f"{result['description']} here, but the report is from {platform}"}
    ratio = f", flaky {result['flaky_ratio']}" if result["flaky_ratio"] else ""
    summary = f"{result['verdict']} on {label}: {result['description']} ({result['runs']} runs{ratio})"
    output = {"reproduction": result, "verdict": result["verdict"]}
    if result["verdict"] == verdicts.UNAVAILABLE_HARDWARE:  # the run stopped for want of a GPU
        output["hardware"] = "a CUDA GPU"
    return StageResult(summary=summary, output=output)


def _issue_text(state: State) -> str:
    """The reporter's words: the issue's title and body and the original poster's comments."""
    issue = state.get("issue") or {}
    poster = (issue.get("user") or {}).get("login")
    by_poster = [c.get("body") or "" for c in state.get("comments") or [] if (c.get("user") or {}).get("login") == poster]
    return "\n".join([issue.get("title") or "", issue.get("body") or "", *by_poster])


def bisect(ctx: RunContext, state: State) -> StageResult:
    """When it passes now (or on `/scrub bisect`): the first environment where the outcome changes."""
    if skipped := _skip(state):
        return skipped
    envs = ctx.settings.environment_map
    wanted = state.get("verdict") == FIXED or ctx.params.get("force_bisect")
    if len(envs) < 2 or not wanted or state.get("verdict") not in (FIXED, REPRODUCES):
        return StageResult(summary="not needed", skipped=True)
    source, reported = state["repro"]["source"], state.get("reported")
    labels = list(envs)
    plan = runner.bisect_plan(state.get("reproduction"))  # clean runs that make a release "absent"
    with ThreadPoolExecutor(max_workers=BISECT_K) as pool:
        found = bisection.bisect(
            labels,
            lambda label: runner.probe(ctx.settings, source, reported, label, plan,
                                       expected_exception=state.get("expected_exception")),
            k=BISECT_K,
            known={labels[-1]: state["verdict"] == REPRODUCES},
            run_all=lambda probe, batch: list(pool.map(probe, batch)),
        )
    summary = bisection.describe_change(found, found.probes.get)
    return StageResult(summary=summary, output={"bisect": found.to_dict() | {"plan": plan.to_dict()}})


def minimize(ctx: RunContext, state: State) -> StageResult:
    """When it reproduces deterministically and is not already minimal (or on `/scrub minimize`)."""
    if skipped := _skip(state):
        return skipped
    reproduction = state.get("reproduction") or {}
    source = state["repro"]["source"]
    forced = bool(ctx.params.get("force_minimize"))
    if state.get("verdict") != REPRODUCES or (reproduction.get("flaky_ratio") and not forced):
        return StageResult(summary="not needed: it does not reproduce deterministically", skipped=True)
    if issues.code_lines(source) <= MINIMAL_LINES and not forced:
        return StageResult(summary=f"already minimal ({issues.code_lines(source)} lines)", skipped=True)
    label = reproduction["result"]["environment"]
    result = runner.minimize_repro(ctx.settings, source, label)
    if result is None:
        return StageResult(summary="nothing smaller keeps the bug", output={"minimized": None})
    return StageResult(summary=f"{result['original_lines']} -> {result['final_lines']} lines",
                       output={"minimized": result})


def report(ctx: RunContext, state: State) -> StageResult:
    built = build_report(ctx, state)
    ctx.save_artifact("report.md", "report", built["report"])
    if state.get("repro"):
        ctx.save_artifact("repro_original.py", "repro", state["repro"]["source"])
    if state.get("minimized"):
        ctx.save_artifact("repro_minimized.py", "repro", state["minimized"]["source"])
    return StageResult(summary=built["headline"], output={"publish": built["publish"]})


def publish(ctx: RunContext, state: State) -> StageResult:
    """The only GitHub writes: one comment (edited on retry), labels in one call, maybe close."""
    plan = state["publish"]
    if ctx.github is None or plan.get("nothing"):
        return StageResult(summary="nothing to write" if ctx.github else "offline", skipped=True)
    repo, number = _target(ctx)
    done = []
    if plan.get("comment"):
        ctx.github.upsert_comment(repo, number, comment_marker(ctx.run_id, "issue"), plan["comment"])
        done.append("comment")
    if plan.get("add_labels") or plan.get("remove_labels"):
        ctx.github.update_labels(repo, number, add=plan.get("add_labels", []), remove=plan.get("remove_labels", []))
        done.append("labels")
    if plan.get("close"):
        ctx.github.close_issue(repo, number, reason="completed")
        done.append("closed")
    return StageResult(summary=", ".join(done) or "nothing to write", output={"published": done})


STAGES: list[Stage] = [
    Stage("fetch", fetch),
    Stage("select", select),
    Stage("triage", triage),
    Stage("review", review),
    Stage("reproduce", reproduce, queue=_code_queue),
    Stage("bisect", bisect, queue=_code_queue, optional=True),
    Stage("minimize", minimize, queue=_code_queue, optional=True),
    Stage("report", report),
    Stage("publish", publish),
]
