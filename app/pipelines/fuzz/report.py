"""The fuzz job's report: the seed's steps, each with what happened, as a `RunReport`.

Status: Success (the test fails then xfails in the sandbox, a draft PR is open, and, with a fix
command configured, the fix is verified: the test passes with it, the related tests pass, the
test fails again without it), Partial (a test but something fell short: the fix did not fix,
broke a related test, the marked test did not xfail, no PR), Failed (nothing to test: bad
inputs, no failure from the seed, the program does not reproduce).
"""

from __future__ import annotations

from typing import Any

from app.engine.diagnosis.text import markdown as diagnosis_markdown
from app.engine.report.render import RunReport, Section, StageLine, fence, inline_code, no_mentions
from app.domain import StageSummary
from app.pipelines.base import State
from app.pipelines.fuzz.state import FuzzState
from app.pipelines.kit.build import describe as describe_build


STAGE_ORDER = ("inputs", "checkout", "build", "fuzz", "reproduce", "minimize", "diagnose", "test", "fix", "publish", "report")


def stage_lines(summaries: list[StageSummary], completed: dict[str, State]) -> list[StageLine]:
    """The execution log: every finished stage in pipeline order, with its summary and duration."""
    by_name = {s.stage: s for s in summaries if s.stage in completed}
    names = [n for n in STAGE_ORDER if n in by_name] + [n for n in by_name if n not in STAGE_ORDER]
    return [StageLine(n, by_name[n].status, by_name[n].duration_s, by_name[n].summary) for n in names]


def outcome(state: FuzzState, settings: Any) -> tuple[str, list[str]]:
    if state.halt:
        return state.halt.status, [state.halt.reason]
    reasons = []
    if settings.fix_command and not state.fix.get("verified"):
        reasons.append("the fix was not verified: " + state.fix.get("summary", "no fix"))
    if not state.pr_url and not (state.offline and state.branch):
        reasons.append("no pull request was opened")
    return ("Partial" if reasons else "Success"), reasons


def _facts(state: FuzzState) -> list[tuple[str, str]]:
    commit = state.commit or state.job.head_sha  # no commit yet: the run stopped before its checkout
    facts = [("Input", state.job.label), ("Repository", f"{state.job.repo}@{commit[:12]}")]
    if state.build:
        facts.append(("Build", describe_build(state.build)))
    if state.job.seed is not None and state.config:
        facts.append(("Fuzzer", state.fuzzer_command + " (the program it printed is kept: fuzzed_program.py)"))
    if state.fuzz_triage.get("verdict") == "device-unavailable":
        facts.append(("Fuzzer's run", state.fuzz_triage.get("reason", "")))
    elif state.fuzz_error:
        facts.append(("Fuzzer's error", state.fuzz_error))
    if state.devices:
        per = "; ".join(f"{d.device or 'any device'}: {d.error or 'passes'}" for d in state.devices)
        facts.append(("Reproduced in the sandbox", per))
    for device, why in state.skipped_devices.items():
        facts.append((f"Not run on {device}", why))
    if state.triage:
        facts.append(("Triage", f"{state.triage.get('verdict')}, {state.failed_in}: {state.triage.get('reason')}"))
    if state.tolerances:
        facts.append(("Tolerances", ", ".join(f"{k}={v:g}" for k, v in sorted(state.tolerances.items()))))
    if state.minimized:
        facts.append(("Minimized", state.minimized["lines"]))
    if state.generated:
        g = state.generated
        facts.append(("Test", f"{g['path']}::{g['name']} ({g['placement']})"))
    for key, label in (("unmarked", "Without the marker"), ("marked", "With the marker")):
        check = state.verification.get(key)
        if check:
            facts.append((label, check["summary"]))
    for name, check in (state.fix.get("checks") or {}).items():
        facts.append((f"Fix check: {name.replace('_', ' ')}", check["summary"]))
    for name, lint in state.lint.items():
        facts.append((f"Lint ({name} commit)", lint["summary"]))
    if state.branch:
        facts.append(("Branch", state.branch))
    return facts


def _changes(state: FuzzState) -> list[str]:
    changes = []
    if state.generated:
        changes.append(f"Commit 1: {state.generated['path']}::{state.generated['name']}, an expected failure on "
                       f"{', '.join(state.failing_devices) or 'every run'}; verified in the sandbox")
    if state.fix.get("verified"):
        changes.append(f"Commit 2: the fix ({', '.join(state.fix.get('files', []))}), marker removed; verified")
    elif state.fix.get("patch"):
        changes.append("The fix command's change was NOT published: " + state.fix.get("summary", ""))
    return changes


def _next_steps(state: FuzzState, status: str) -> list[str]:
    steps = []
    if state.triage.get("verdict") == "invalid-program":
        steps.append("Report the generator bug to the fuzzer's owners (tools/experimental/torchfuzz): the program "
                     "it printed is invalid in eager mode; no test was filed")
    if state.skipped_devices:
        steps.append(f"Run it on a repro-gpu worker for {', '.join(state.skipped_devices)}")
    if state.generated:
        steps.append(f"Run it: python -m pytest {state.generated['path']} -k {state.generated['name']}")
    if status == "Partial" and state.fix.get("patch") and not state.fix.get("verified"):
        steps.append("Fix the bug by hand (the fix command's attempt is in the run's log), then drop the marker")
    if state.diagnosis and state.diagnosis.next_step:
        steps.append(state.diagnosis.next_step)
    if state.pr_url:
        steps.append("Review the draft PR: land the test (commit 1) and the fix (commit 2)")
    return steps


def _summary(state: FuzzState) -> str:
    if not state.error:  # nothing reproduced: why the job stopped (a seed or program that passes)
        return state.halt.reason if state.halt else ""
    where = f"{state.error} on {', '.join(state.failing_devices) or 'every run'}"
    if state.triage.get("verdict") == "invalid-program":
        return f"generator bug, no test filed: {where} ({state.failed_in})"
    return where + (f" ({state.failed_in})" if state.triage else "")


def build_report(state: FuzzState, settings: Any, completed: dict[str, State],
                 summaries: list[StageSummary] = ()) -> RunReport:
    status, reasons = outcome(state, settings)
    sections = []
    if reasons and status != "Success":
        sections.append(Section("Why not Success", "\n".join(f"- {inline_code(r)}" for r in reasons)))
    if state.program:
        sections.append(Section("Failing program" + (" (minimized)" if state.minimized else ""),
                                fence(state.program, "python")))
    failing_run = next((d for d in state.devices if d.fails), None)
    if failing_run:
        sections.append(Section("Error", fence(failing_run.output[-2500:])))
    if diagnosis := diagnosis_markdown(state.diagnosis, heading="Experiments"):
        sections.append(Section("Diagnosis", diagnosis))
    if state.fix.get("questions"):
        sections.append(Section("Fix summary", no_mentions(state.fix["questions"])))
    for key in ("unmarked", "marked"):
        check = state.verification.get(key)
        if check and not check["ok"]:
            sections.append(Section("Test output", fence(check["output"])))
    for check in (state.fix.get("checks") or {}).values():
        if not check["ok"] and check.get("output"):
            sections.append(Section("Fix check output", fence(check["output"])))
    if state.fuzz_output and not state.program:
        sections.append(Section("Fuzzer output", fence(state.fuzz_output[-3000:])))
    return RunReport(
        title=f"Fuzz bug: {state.job.label} ({state.job.repo})",
        status=status,
        summary=_summary(state),
        pr_url=state.pr_url,
        test_created=(f"{state.generated['path']}::{state.generated['name']}" if state.generated else None),
        changes=_changes(state),
        stages=stage_lines(list(summaries), completed),
        next_steps=_next_steps(state, status),
        contacts=[],
        facts=_facts(state),
        sections=sections,
    )
