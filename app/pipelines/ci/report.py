"""The CI job's report (seed 002's template, rendered by `app.engine.report.render`).

`outcome(state, settings)` decides the status: Success (reproduced, a verified test, a draft
PR, and a verified fix when a fix command is configured; a stress test must also meet the
20-minute target), Partial (reproduced but something fell short, or a phase ran past its
limit), Failed (nothing reproduced: not reproducible here, the test cannot run, checkout
failed). `build_report` turns the pipeline state into a `RunReport`.
"""

from __future__ import annotations

from typing import Any

from app.domain import StageSummary

from app.engine.verdict import rerun as reruns
from app.engine.report.render import RunReport, Section, StageLine, fence, inline_code
from app.pipelines.base import State
from app.pipelines.ci.job import job_of

STAGE_ORDER = ("inputs", "job", "checkout", "rerun", "test", "fix", "publish", "report")


def outcome(state: State, settings: Any) -> tuple[str, list[str]]:
    """(Success | Partial | Failed, the reasons it is not Success)."""
    halt = state.get("halt")
    if halt:
        return halt["status"], [halt["reason"]]
    reasons = []
    budget = state.get("stress", {}).get("budget")
    if budget and not budget["passes"]:
        reasons.append("the stress test misses the target of a failure within 20 minutes with 95% odds")
    fix = state.get("fix")
    if settings.fix_command and not (fix and fix.get("verified")):
        reasons.append("the fix was not verified: " + (fix or {}).get("summary", "no fix"))
    if state.get("generated") and not state.get("pr_url"):
        reasons.append("no pull request was opened")
    return ("Partial" if reasons else "Success"), reasons


def _rerun_fact(state: State) -> str:
    r = state["rerun"]
    low, high = r["interval"]
    extra = "".join(f", {r[k]} {k.replace('_', ' ')}" for k in ("other_failures", "timeouts", "errors") if r.get(k))
    return (f"{r['failures']}/{r['runs']} runs failed, rate {r['rate']:.0%} "
            f"(95% Wilson interval {low:.0%}–{high:.0%}){extra}")


def _facts(state: State) -> list[tuple[str, str]]:
    job = job_of(state)
    facts = [("Failure", job.failure_line), ("Failing test", job.test)]
    if state.get("verdict"):
        facts.append(("Verdict", state["verdict"]))
    if state.get("rerun"):
        facts.append(("Reruns in the sandbox", _rerun_fact(state)))
    if "hint_confirmed" in state:
        held = "confirmed by the reruns" if state["hint_confirmed"] else "contradicted by the reruns"
        facts.append(("Dispatch hint `deterministic`", f"{job.deterministic_hint} ({held})"))
    if state.get("stress"):
        facts.append(("Stress test", state["stress"]["described"]))
    for name, value in (("Signature", job.signature), ("CI run", job.run_url), ("Commit", state.get("commit", ""))):
        if value:
            facts.append((name, value))
    if state.get("branch"):
        facts.append(("Branch", state["branch"]))
    return facts


def _changes(state: State) -> list[str]:
    changes = []
    generated = state.get("generated")
    if generated:
        kind = "stress test" if generated["kind"] == "stress" else "reproduction test"
        verified = state.get("verification", {}).get("xfailed")
        changes.append(f"Added {kind} {generated['path']}, marked as an expected failure (strict)"
                       + ("; verified to xfail in the sandbox" if verified else "; NOT verified"))
    fix = state.get("fix") or {}
    if fix.get("patch"):
        changes.append(f"Fix from the fix command: {fix['summary']}")
    return changes


def _next_steps(state: State, status: str) -> list[str]:
    job, verdict = job_of(state), state.get("verdict")
    steps = []
    if state.get("halt", {}).get("phase"):
        steps.append("Retry the run with a longer limit for the "
                     f"{state['halt']['phase']} phase (SCRUB_PHASE_{state['halt']['phase'].upper()}_S)")
    if verdict == reruns.NOT_REPRODUCIBLE:
        steps.append("Rerun on hardware like the CI job's (" + (job.job_name or "see the CI run") + ")")
    if job.needs_gpu:
        steps.append("Make sure a `repro-gpu` worker serves this repository")
    if state.get("generated", {}).get("kind") == "stress":
        steps.append(f"Run the stress test: python {state['generated']['path']} --workers 4 --timeout 30")
    if status != "Failed" and state.get("pr_url"):
        steps.append("Review the draft PR; land the test, then fix the bug and drop the expected-failure marker")
    return steps


def _contacts(state: State) -> list[str]:
    contacts = [f"{owner} (CODEOWNERS of {state.get('test_file', 'the test')})" for owner in state.get("owners", [])]
    contacts += [f"{author} (recent author of the test file)" for author in state.get("authors", [])]
    return contacts


def stage_lines(summaries: list[StageSummary], completed: dict[str, State]) -> list[StageLine]:
    """The execution log from the stage events: finished stages, in the pipeline's order."""
    by_name = {s.stage: s for s in summaries if s.stage in completed}
    names = [n for n in STAGE_ORDER if n in by_name] + [n for n in by_name if n not in STAGE_ORDER]
    return [StageLine(n, by_name[n].status, by_name[n].duration_s, by_name[n].summary) for n in names]


def build_report(state: State, settings: Any, completed: dict[str, State], pr_url: str | None,
                 summaries: list[StageSummary] = ()) -> RunReport:
    job = job_of(state)
    status, reasons = outcome(state, settings)
    sections = []
    if reasons and status != "Success":
        sections.append(Section("Why not Success", "\n".join(f"- {inline_code(r)}" for r in reasons)))
    if job.prompt:
        sections.append(Section("Request", fence(job.prompt)))
    if job.message:
        sections.append(Section("CI failure", fence(f"{job.exception}: {job.message}".strip(": "))))
    if state.get("verdict") in (reruns.NOT_REPRODUCIBLE, reruns.CANNOT_RUN, None) and state.get("rerun_output"):
        sections.append(Section("Last rerun output", fence(state["rerun_output"])))
    verification = state.get("verification")
    if verification and not verification.get("xfailed"):
        sections.append(Section("Verification output", fence(verification.get("output", ""))))
    return RunReport(
        title=f"CI failure: {job.test or 'unknown test'} ({job.repo})",
        status=status,
        summary=state.get("rerun") and f"{state.get('verdict')}: {_rerun_fact(state)}" or "",
        pr_url=pr_url,
        test_created=state.get("test_created"),
        changes=_changes(state),
        stages=stage_lines(list(summaries), completed),
        next_steps=_next_steps(state, status),
        contacts=_contacts(state),
        facts=_facts(state),
        sections=sections,
    )
