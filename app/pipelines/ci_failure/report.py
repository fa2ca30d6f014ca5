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

from app.engine.diagnosis.text import markdown as diagnosis_markdown
from app.engine.verdict import rerun as reruns
from app.engine.report.render import RunReport, Section, StageLine, fence, inline_code
from app.pipelines.base import State
from app.pipelines.ci_failure.state import CIState, job_of
from app.pipelines.kit.build import describe as describe_build

STAGE_ORDER = ("inputs", "job", "checkout", "build", "rerun", "diagnose", "test", "fix", "publish", "report")


def outcome(state: CIState, settings: Any) -> tuple[str, list[str]]:
    """(Success | Partial | Failed, the reasons it is not Success)."""
    if state.halt:
        return state.halt.status, [state.halt.reason]
    reasons = []
    budget = state.stress.get("budget")
    if budget and not budget["passes"]:
        reasons.append("the stress test misses the target of a failure within 20 minutes with 95% odds")
    fix = state.fix
    if settings.fix_command and not (fix and fix.verified):
        reasons.append("the fix was not verified: " + (fix.summary if fix else "no fix"))
    if state.generated and not state.pr_url:
        reasons.append("no pull request was opened")
    return ("Partial" if reasons else "Success"), reasons


def _rerun_fact(state: CIState) -> str:
    r = state.rerun
    low, high = r["interval"]
    extra = "".join(f", {r[k]} {k.replace('_', ' ')}" for k in ("other_failures", "timeouts", "errors") if r.get(k))
    return (f"{r['failures']}/{r['runs']} runs failed, rate {r['rate']:.0%} "
            f"(95% Wilson interval {low:.0%}–{high:.0%}){extra}")


def _facts(state: CIState) -> list[tuple[str, str]]:
    job = job_of(state)
    facts = [("Failure", job.failure_line), ("Failing test", job.test)]
    if job.classified:
        facts.append(("Classified", job.classified))
    if state.verdict:
        facts.append(("Verdict", state.verdict))
    if state.build:
        facts.append(("Build", describe_build(state.build)))
    if state.rerun:
        facts.append(("Reruns in the sandbox", _rerun_fact(state)))
    if state.hint_confirmed is not None:
        held = "confirmed by the reruns" if state.hint_confirmed else "contradicted by the reruns"
        facts.append(("Dispatch hint `deterministic`", f"{job.deterministic_hint} ({held})"))
    if state.stress.get("described"):
        facts.append(("Stress test", state.stress["described"]))
    for name, value in (("Signature", job.signature), ("CI run", job.run_url), ("Commit", state.commit)):
        if value:
            facts.append((name, value))
    if state.branch:
        facts.append(("Branch", state.branch))
    return facts


def _changes(state: CIState) -> list[str]:
    changes = []
    generated = state.generated
    if generated:
        verified = state.verification is not None and state.verification.xfailed
        changes.append(f"Added {generated.described} {generated.path}, marked as an expected failure (strict)"
                       + ("; verified to xfail in the sandbox" if verified else "; NOT verified")
                       + (f" ({generated.note})" if generated.note else ""))
    if state.fix and state.fix.patch:
        changes.append(f"Fix from the fix command: {state.fix.summary}")
    return changes


def _next_steps(state: CIState, status: str) -> list[str]:
    job, verdict = job_of(state), state.verdict
    steps = []
    if state.halt and state.halt.phase:
        phase = state.halt.phase
        steps.append(f"Retry the run with a longer limit for the {phase} phase (SCRUB_PHASE_{phase.upper()}_S)")
    if verdict == "needs-build":
        steps.append("Give Scrubbot the commit's build: a nightly index (SCRUB_TORCH_NIGHTLY_INDEX_URL) for "
                     "Python-only changes, or a build command (SCRUB_BUILD_COMMAND) that fetches CI's wheel")
    if verdict == reruns.NOT_REPRODUCIBLE:
        steps.append("Rerun on hardware like the CI job's (" + (job.job_name or "see the CI run") + ")")
    if job.needs_gpu:
        steps.append("Make sure a `repro-gpu` worker serves this repository")
    if state.diagnosis and state.diagnosis.next_step:
        steps.append(state.diagnosis.next_step)
    if state.generated and state.generated.is_stress:
        steps.append(f"Run the stress test: python {state.generated.path} --workers 4 --timeout 30")
    if status != "Failed" and state.pr_url:
        steps.append("Review the draft PR; land the test, then fix the bug and drop the expected-failure marker")
    return steps


def _contacts(state: CIState) -> list[str]:
    contacts = [f"{owner} (CODEOWNERS of {state.test_file or 'the test'})" for owner in state.owners]
    contacts += [f"{author} (recent author of the test file)" for author in state.authors]
    return contacts


def stage_lines(summaries: list[StageSummary], completed: dict[str, State]) -> list[StageLine]:
    """The execution log from the stage events: finished stages, in the pipeline's order."""
    by_name = {s.stage: s for s in summaries if s.stage in completed}
    names = [n for n in STAGE_ORDER if n in by_name] + [n for n in by_name if n not in STAGE_ORDER]
    return [StageLine(n, by_name[n].status, by_name[n].duration_s, by_name[n].summary) for n in names]


def build_report(state: CIState, settings: Any, completed: dict[str, State], pr_url: str | None,
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
    if state.verdict in (reruns.NOT_REPRODUCIBLE, reruns.CANNOT_RUN, None) and state.rerun_output:
        sections.append(Section("Last rerun output", fence(state.rerun_output)))
    if diagnosis := diagnosis_markdown(state.diagnosis, heading="Experiments"):
        sections.append(Section("Diagnosis", diagnosis))
    verification = state.verification
    if verification and not verification.xfailed:
        sections.append(Section("Verification output", fence(verification.output)))
    return RunReport(
        title=f"CI failure: {job.test or 'unknown test'} ({job.repo})",
        status=status,
        summary=f"{state.verdict}: {_rerun_fact(state)}" if state.rerun else "",
        pr_url=pr_url,
        test_created=state.test_created or None,
        changes=_changes(state),
        stages=stage_lines(list(summaries), completed),
        next_steps=_next_steps(state, status),
        contacts=_contacts(state),
        facts=_facts(state),
        sections=sections,
    )
