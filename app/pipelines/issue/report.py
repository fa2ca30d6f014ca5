"""Pipeline state -> what the issue pipeline says: the comment, labels, close, and the run report.

`build_report(ctx, state, stage_names)` (the typed `IssueState`) decides, per verdict, what `publish` will
write (a `PublishPlan`):

| verdict | comment | labels | close |
| --- | --- | --- | --- |
| closed | none | none | no (nothing is written) |
| feature / better-engineering / documentation / tracker / needs-reproduction | none | the triage label | no |
| screenshot-only | a request for a copyable script | `needs reproduction` | no |
| unavailable-hardware | which hardware is missing | — | no |
| reproduces | "still reproduces" (+ minimized repro, flaky ratio, first bad version) | `needs reproduction` removed | no |
| fixed | "no longer reproduces" (+ first fixed version) | — | completed |
| different-error | "no longer reproduces" + both errors | — | no |
| inconclusive | why it cannot tell | — | no |
| missing-dependency | which package the workers lack | — | no |
| duplicate | none | none | no |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from collections.abc import Sequence

from app.domain import StageSummary, Verdict
from app.engine.verdict.bisect import BisectResult
from app.engine.verdict.bisect_probe import ProbePlan
from app.engine.verdict.culprit import RELEASE
from app.engine.verdict.culprit import describe as describe_culprit
from app.engine.verdict.culprit import evidence as culprit_evidence
from app.engine.verdict.signature import traceback_frames

from app.engine.diagnosis.text import markdown as diagnosis_markdown
from app.engine.verdict import classify as verdicts
from app.engine.verdict import stopped
from app.engine.report.render import (
    IssueComment, Notice, RunReport, Section, StageLine, fence, inline_code, no_mentions, render_issue_comment,
    render_notice, render_run_report,
)
from app.pipelines.issue.state import IssueState, PublishPlan, Reproduction
from app.pipelines.issue.stress import stress_note, stress_section
from app.pipelines.issue.testcase import comment_section, report_section
from app.pipelines.state import plain

Json = dict[str, Any]
PASSES_NOW_LABEL = "passes now"
NEEDS_REPRO_LABEL = "needs reproduction"  # it passes, but nothing witnesses a fix: for a person to confirm
# The report's next step per verdict (the issue kind declares it: `KIND.next_steps`).
NEXT_STEPS = {
    Verdict.closed: "Nothing: the issue is closed.",
    Verdict.feature: "Route to the feature backlog; no reproduction needed.",
    Verdict.better_engineering: "Route to the better-engineering backlog.",
    Verdict.documentation: "Route to the documentation owners; nothing to reproduce.",
    Verdict.tracker: "Nothing: tracking issues are not reproduced.",
    Verdict.needs_reproduction: "Wait for the reporter to add a runnable repro.",
    Verdict.screenshot_only: "Wait for the reporter to paste the repro as text.",
    Verdict.unavailable_hardware: "Run it by hand on the hardware it needs, or ask for a single-device repro.",
    Verdict.reproduces: "Still a valid bug: triage to an owner.",
    Verdict.fixed: "Closed as fixed; reopen if the reporter still sees it.",
    Verdict.different_error: "Check whether the new error is a setup change (renamed API) or a different bug.",
    Verdict.inconclusive: "Ask the reporter for an assertion or the exact error.",
    Verdict.passes_now: "Confirm the fix by hand (or provision an older release) and close it.",
    Verdict.missing_dependency: "Run it on a machine with the package, or ask for a PyTorch-only repro.",
    Verdict.duplicate: "Nothing: follow the original issue.",
}


def _version(state: IssueState) -> str:
    result = state.reproduction.result if state.reproduction else {}
    return str(result.get("torch_version") or result.get("environment") or "unknown")


def _comment(state: IssueState) -> str | None:
    verdict, repro = state.verdict, state.repro
    # set whenever the verdict came from running the repro (the verdicts that get a comment)
    reproduction = state.reproduction or Reproduction(verdict=verdict or "")
    if verdict == Verdict.screenshot_only:
        return render_notice(Notice(Verdict.screenshot_only))
    if verdict == Verdict.unavailable_hardware:
        detail = state.hardware or (state.triage.reason if state.triage else "").removeprefix("the repro needs ")
        return render_notice(Notice(Verdict.unavailable_hardware, detail=detail.removesuffix(", which no worker has")))
    if verdict == Verdict.inconclusive:
        observed, why = _inconclusive_evidence(state, reproduction)
        return render_notice(Notice(Verdict.inconclusive, detail=_version(state), observed=observed, why=why,
                                    repro=_repro_used(repro)))
    if verdict == Verdict.passes_now:
        runs = int(reproduction.runs or 0)
        observed = f"runs to completion ({runs} run{'s' if runs != 1 else ''}, none showed the reported failure)"
        return render_notice(Notice(Verdict.passes_now, detail=_version(state), observed=observed,
                                    why=state.witness.why if state.witness else "nothing witnesses it",
                                    repro=_repro_used(repro)))
    if verdict == Verdict.missing_dependency:
        module = stopped.missing_module(reproduction.result) or "a package"
        return render_notice(Notice(Verdict.missing_dependency, detail=module))
    if verdict == Verdict.needs_reproduction and reproduction.result:  # the run stopped at an input not in the thread
        missing = stopped.missing_input(reproduction.result, repro.source if repro else "") or "a file"
        return render_notice(Notice(Verdict.needs_reproduction, detail=missing, repro=_repro_used(repro)))
    if verdict not in (verdicts.REPRODUCES, verdicts.FIXED, verdicts.DIFFERENT):
        return None
    found = state.bisect
    comment = IssueComment(
        reproduces=verdict == verdicts.REPRODUCES,
        version=_version(state),
        source_url=repro.url if repro else None,
        source_author=repro.author if repro else None,
        minimized=state.minimized.source if state.minimized else None,
        flaky_ratio=reproduction.flaky_ratio,
        source_where=repro.where if repro else None,
        source_line=repro.line if repro else 0,
        source_first_line=repro.first_line[:120] if repro else None,
        source_why=repro.why if repro else None,
        witness=_witness_text(state) if verdict == verdicts.FIXED else None,
        notes=[stress_note(state.stress)] if state.stress else [],
        **_evidence(reproduction, state.stated_values),
    )
    before, after, untested = _change(found)
    comment.untested = untested
    if found and after and found.oldest_outcome is True:
        comment.fixed_in, comment.last_broken = after, before
    elif found and after and found.oldest_outcome is False:
        comment.regressed_in, comment.last_good = after, before
    if state.culprit and state.culprit.level != RELEASE:  # the culprit line: the PR and its probes
        comment.culprit = describe_culprit(state.culprit, _repo_of(state.issue))
        comment.culprit_evidence = culprit_evidence(state.culprit)
    if verdict == verdicts.DIFFERENT:
        comment.different_error = reproduction.description
        comment.reported_error = verdicts.describe_reported(plain(state.reported))
    comment.sections = [s for s in (diagnosis_markdown(state.diagnosis), comment_section(state)) if s]
    return render_issue_comment(comment)


def _repo_of(issue: Json) -> str:
    """`owner/name` from the issue's URL (PR references to it are written `#N`)."""
    parts = str(issue.get("html_url") or "").split("/")
    return "/".join(parts[3:5]) if len(parts) > 4 else ""


def _repro_used(repro: Any) -> str:
    """"<url> (by op): the block in the issue body at line 3, starting `x = ...`: why", made safe."""
    if repro is None:
        return ""
    text = f"{repro.url} (by {no_mentions(repro.author)})"
    if repro.where:
        text += f": the block in {repro.where} at line {repro.line}"
        if repro.first_line:
            text += f", starting {inline_code(repro.first_line[:120])}"
        if repro.why:
            text += f" ({no_mentions(repro.why)})"
    return text


def _inconclusive_evidence(state: IssueState, reproduction: Reproduction) -> tuple[str, str]:
    """For an inconclusive run: what it did ("fails with X now") and why that says nothing."""
    result = reproduction.result or {}
    if not result:
        return "", ""
    if reproduction.platform:  # (the stage's description already ends with that reason)
        return (str(reproduction.description).removesuffix(f", but the report is from {reproduction.platform}"),
                f"the report is from {reproduction.platform}")
    outcome = result.get("outcome")
    if outcome == "passed":
        return "", ""
    did = {"error": f"fails with {reproduction.description} now", "crash": f"is {reproduction.description} now",
           "timeout": f"{reproduction.description} now"}.get(str(outcome), reproduction.description)
    if outcome == "error" and stopped.missing_input(result, "") == stopped.NETWORK:
        return did, "it needs the network for a download, and Scrubbot's sandbox has no network"
    if state.reported:
        return did, f"the issue reports {verdicts.describe_reported(plain(state.reported))}"
    return did, "the issue reports no failure to compare it with, and the script's own check did not fail"


def _witness_text(state: IssueState) -> str | None:
    witness = state.witness
    if witness is None or not witness.holds:
        return None
    if witness.kind == "older-release":
        return f"on PyTorch {witness.environment} the same script fails with the reported failure ({witness.observed})"
    return "the reporter's own script checks its result and the issue shows it failing; it passes now"


def _change(found: BisectResult | None) -> tuple[str | None, str | None, list[str]]:
    """(last unchanged, first changed, untested between them). A certain boundary has nothing
    untested; `changed_between` brackets a change next to untested releases."""
    if found is None:
        return None, None, []
    if found.first_changed:
        return found.last_unchanged, found.first_changed, []
    between = found.changed_between
    if between and len(between) == 2:
        return between[0], between[1], list(found.untested)
    return None, None, []


def _bisection_lines(found: BisectResult | None, plan: ProbePlan | None) -> list[str]:
    """One line per release tried (with runs and why untested; runs stored before that was
    kept: from `probes`), then what a clean release means and where an uncertain change lies."""
    if found is None:
        return []
    releases = [r for r in found.releases if isinstance(r, dict)]
    if not releases:
        return [f"- {label}: {'reproduces' if hit else 'passes'}" for label, hit in found.probes.items()]
    lines = []
    for release in releases:
        outcome = release.get("outcome")
        runs = release.get("runs") if isinstance(release.get("runs"), int) else 0
        said = ("reproduces" if outcome else "passes") if outcome is not None else \
            f"could not be tested ({no_mentions(str(release.get('why') or 'another outcome'))})"
        lines.append(f"- {release.get('label')}: {said}" + (f" ({runs} run{'s' if runs != 1 else ''})" if runs else ""))
    if plan is not None and plan.clean_runs > 1:
        lines.append(f"\nA release counts as passing after {plan.clean_runs} clean runs in a row: a failure rate "
                     f"of {100 * plan.detectable_rate:.0f}% or more would have shown with "
                     f"{100 * plan.confidence:.0f}% odds.")
    before, after, untested = _change(found)
    if untested:
        lines.append(f"\nThe change is between {before} and {after}; {', '.join(untested)} could not be tested.")
    return lines


PRINTED_LINES = 6  # the last lines a run printed, as the evidence of a wrong result it shows


def _evidence(reproduction: Reproduction, values: Any = None) -> Json:
    """What the runs showed, for the comment: the failure, its frame in the repro, the counts;
    for a run that reproduces without failing (it prints the stated wrong result, or the
    script's own BUG line), what it printed and, when the issue states them, both values."""
    result = reproduction.result
    interval = reproduction.interval
    frames = [f for f in traceback_frames(result.get("output_tail") or "") if f.path.endswith("repro.py")]
    frame = f"repro.py, line {frames[-1].line}" + (f": {frames[-1].code}" if frames[-1].code else "") if frames else None
    output = [line for line in (result.get("output_tail") or "").splitlines() if line.strip()]
    if reproduction.verdict == verdicts.REPRODUCES and result.get("outcome") == "passed":
        printed = "\n".join(line[:200] for line in output[-PRINTED_LINES:]) or "(nothing printed)"
        stated = (f"\n\nThe issue states it prints {values.actual[:200]!r} where {values.expected[:200]!r} is expected."
                  if values else "")
        return {"observed": f"{printed}{stated}", "frame": None, "runs": int(reproduction.runs or 0),
                "failures": int(reproduction.reproduced or 0), "interval": tuple(interval) if interval else None,
                "now": None}
    now = None
    if reproduction.verdict == verdicts.FIXED and result.get("outcome") == "error":
        now = f"the repro raises {str(reproduction.description)[:200]!r}, the error the report expected instead"
    elif result.get("outcome") == "passed":
        now = "the repro runs to completion" + (f"; its last output line is `{output[-1][:200].replace('`', chr(39))}`" if output else "")
    return {
        "observed": reproduction.description if result.get("outcome") != "passed" else None,
        "frame": frame,
        "runs": int(reproduction.runs or 0),
        "failures": int(reproduction.reproduced or 0),
        "interval": tuple(interval) if interval else None,
        "now": now,
    }


def publish_plan(state: IssueState) -> PublishPlan:
    """What `publish` writes: a comment body (no marker), labels, close."""
    verdict = state.verdict
    if verdict == Verdict.closed:
        return PublishPlan(nothing=True)
    tri = state.triage
    add = list(tri.add_labels) if tri else []
    if verdict == verdicts.PASSES_NOW and PASSES_NOW_LABEL not in _labels(state.issue):
        add.append(PASSES_NOW_LABEL)
    if verdict == Verdict.needs_reproduction and state.reproduction and NEEDS_REPRO_LABEL not in _labels(state.issue) | set(add):
        add.append(NEEDS_REPRO_LABEL)  # the run stopped at an input the thread does not give
    return PublishPlan(
        comment=_comment(state),
        add_labels=add,
        remove_labels=list(tri.remove_labels) if tri else [],
        close=may_close(state),
    )


def may_close(state: IssueState) -> bool:
    """Close only a fixed verdict, with a witness, on the reporter's or a triager's repro."""
    return (state.verdict == verdicts.FIXED and state.witness is not None and state.witness.holds
            and state.repro is not None and state.repro.trusted)


def _labels(issue: Json) -> set[str]:
    return {(label.get("name") if isinstance(label, dict) else str(label)) for label in issue.get("labels") or []}


def _status(state: IssueState, failed: list[str]) -> str:
    if failed:
        return "Partial"
    partial = (Verdict.different_error, Verdict.inconclusive, Verdict.missing_dependency, Verdict.unavailable_hardware,
               Verdict.passes_now)
    return "Partial" if state.verdict in partial else "Success"


def _sections(state: IssueState) -> list[Section]:
    sections = []
    if state.reported:
        sections.append(Section("Reported Error", fence(verdicts.describe_reported(plain(state.reported)), "text")))
    if repro := state.repro:
        sections.append(Section("Selected Repro", f"From {repro.url} by {no_mentions(repro.author)} "
                                f"({repro.lines} lines).\n\n{fence(repro.source, 'python')}"))
    if findings := state.findings:
        lines = [f"- line {f.line}, {f.kind}: {no_mentions(f.detail)}" for f in findings]
        sections.append(Section("Security Review", "\n".join(lines)))
    if reproduction := state.reproduction:
        result = reproduction.result
        head = (f"{reproduction.verdict}: {no_mentions(reproduction.description)} on "
                f"{result['environment']} (PyTorch {result['torch_version']}), "
                f"{reproduction.reproduced}/{reproduction.runs} runs reproduced.")
        sections.append(Section("Reproduction", f"{head}\n\n{fence(result.get('output_tail') or '(no output)', 'text')}"))
    if lines := _bisection_lines(state.bisect, state.bisect_plan):
        sections.append(Section("Bisection", "\n".join(lines)))
    if state.culprit:
        said = describe_culprit(state.culprit, _repo_of(state.issue))
        sections.append(Section("Culprit", no_mentions("\n".join([said[:1].upper() + said[1:] + ".", "",
                                                                  *culprit_evidence(state.culprit)]))))
    if minimized := state.minimized:
        sections.append(Section("Minimized Repro", f"{minimized.original_lines} -> {minimized.final_lines} "
                                f"lines.\n\n{fence(minimized.source, 'python')}"))
    if state.stress:
        sections.append(stress_section(state.stress))
    if diagnosis := diagnosis_markdown(state.diagnosis, heading="Experiments"):
        sections.append(Section("Diagnosis", diagnosis))
    if test := report_section(state):
        sections.append(Section("Failing Test", test))
    return sections


def stage_lines(summaries: list[StageSummary], done: dict[str, Json]) -> list[StageLine]:
    """The execution log: every finished stage (done or skipped) from its stage event."""
    return [StageLine(s.stage, s.status, s.duration_s, s.summary) for s in summaries if s.stage in done]


@dataclass(frozen=True)
class IssueReport:
    report: str  # the run report (markdown)
    headline: str  # one line, the report stage's summary
    publish: PublishPlan


def build_report(ctx: Any, state: IssueState, stage_names: Sequence[str]) -> IssueReport:
    """The run report (markdown), a one-line headline and the publish plan. `stage_names`: the
    pipeline's stages in order (those before `report` that are not done are "not completed")."""
    repo, number = ctx.params.get("repo"), ctx.params.get("issue")
    done = ctx.completed_stages()
    stages = stage_lines(ctx.stage_summaries(), done)
    order = list(stage_names)
    failed = [name for name in order[:order.index("report")] if name not in done]
    verdict = state.verdict or "unknown"
    plan = publish_plan(state)
    issue = state.issue
    report = RunReport(
        title=f"Scrub of {repo}#{number}: {issue.get('title', '')}",
        status=_status(state, failed),
        summary=f"verdict {verdict}",
        facts=[("Issue", issue.get("html_url", "")), ("Verdict", verdict),
               ("PyTorch", _version(state)), ("Triage", state.triage.reason if state.triage else "")]
        + ([("Stages not completed", ", ".join(failed))] if failed else []),
        changes=[],
        stages=stages,
        next_steps=[NEXT_STEPS.get(verdict, "Look at the run log.")]
        + ([state.diagnosis.next_step] if state.diagnosis and state.diagnosis.next_step else []),
        contacts=[f"{issue['user']['login']} (reporter)"] if (issue.get("user") or {}).get("login") else [],
        sections=_sections(state) + ([Section("Issue Comment", fence(plan.comment, "markdown"))]
                                     if plan.comment else []),
    )
    return IssueReport(render_run_report(report), f"verdict {verdict}", plan)
