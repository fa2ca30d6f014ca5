"""The fuzz job's report: the seed's steps, each with what happened, as a `RunReport`.

Status: Success (the test fails then xfails in the sandbox, a draft PR is open, and, with a fix
command configured, the fix is verified: the test passes with it, the related tests pass, the
test fails again without it), Partial (a test but something fell short: the fix did not fix,
broke a related test, the marked test did not xfail, no PR), Failed (nothing to test: bad
inputs, no failure from the seed, the program does not reproduce).
"""

from __future__ import annotations

from typing import Any

from app.engine.report.render import RunReport, Section, StageLine, fence, inline_code, no_mentions
from app.domain import StageSummary
from app.pipelines.base import State
from app.pipelines.fuzz.state import FuzzState


STAGE_ORDER = ("inputs", "checkout", "fuzz", "reproduce", "minimize", "test", "fix", "publish", "report")


def stage_lines(summaries: list[StageSummary], completed: dict[str, State]) -> list[StageLine]:
    """The execution log: every finished stage in pipeline order, with its summary and duration."""
    by_name = {s.stage: s for s in summaries if s.stage in completed}
    names = [n for n in STAGE_ORDER if n in by_name] + [n for n in by_name if n not in STAGE_ORDER]
    return [StageLine(n, by_name[n].status, by_name[n].duration_s, by_name[n].summary) for n in names]


def outcome(state: State, settings: Any) -> tuple[str, list[str]]:
    halt = state.get("halt")
    if halt:
        return halt["status"], [halt["reason"]]
    reasons = []
    fix = state.get("fix") or {}
    if settings.fix_command and not fix.get("verified"):
        reasons.append("the fix was not verified: " + fix.get("summary", "no fix"))
    if not state.get("pr_url") and not (state.get("offline") and state.get("branch")):
        reasons.append("no pull request was opened")
    return ("Partial" if reasons else "Success"), reasons


def _facts(fs: FuzzState, state: State) -> list[tuple[str, str]]:
    facts = [("Input", fs.job.label), ("Repository", f"{fs.job.repo}@{state.get('commit', fs.job.head_sha)[:12]}")]
    if fs.job.seed is not None and fs.config:
        facts.append(("Fuzzer", fs.config.get("command", "").replace("{seed}", str(fs.job.seed))))
    if fs.fuzz_error:
        facts.append(("Fuzzer's error", fs.fuzz_error))
    if fs.devices:
        per = "; ".join(f"{d.device or 'any device'}: {d.error or 'passes'}" for d in fs.devices)
        facts.append(("Reproduced in the sandbox", per))
    if fs.tolerances:
        facts.append(("Tolerances", ", ".join(f"{k}={v:g}" for k, v in sorted(fs.tolerances.items()))))
    if state.get("minimized"):
        facts.append(("Minimized", state["minimized"]["lines"]))
    if fs.generated:
        facts.append(("Test", f"{fs.generated['path']}::{fs.generated['name']} ({fs.generated['placement']})"))
    for key, label in (("unmarked", "Without the marker"), ("marked", "With the marker")):
        check = fs.verification.get(key)
        if check:
            facts.append((label, check["summary"]))
    for name, check in (fs.fix.get("checks") or {}).items():
        facts.append((f"Fix check: {name.replace('_', ' ')}", check["summary"]))
    for name, lint in (state.get("lint") or {}).items():
        facts.append((f"Lint ({name} commit)", lint["summary"]))
    if state.get("branch"):
        facts.append(("Branch", state["branch"]))
    return facts


def _changes(fs: FuzzState, state: State) -> list[str]:
    changes = []
    if fs.generated:
        changes.append(f"Commit 1: {fs.generated['path']}::{fs.generated['name']}, an expected failure on "
                       f"{', '.join(fs.failing_devices) or 'every run'}; verified in the sandbox")
    if fs.fix.get("verified"):
        changes.append(f"Commit 2: the fix ({', '.join(fs.fix.get('files', []))}), marker removed; verified")
    elif fs.fix.get("patch"):
        changes.append("The fix command's change was NOT published: " + fs.fix.get("summary", ""))
    return changes


def _next_steps(fs: FuzzState, state: State, status: str) -> list[str]:
    steps = []
    if fs.generated:
        steps.append(f"Run it: python -m pytest {fs.generated['path']} -k {fs.generated['name']}")
    if status == "Partial" and fs.fix.get("patch") and not fs.fix.get("verified"):
        steps.append("Fix the bug by hand (the fix command's attempt is in the run's log), then drop the marker")
    if state.get("pr_url"):
        steps.append("Review the draft PR: land the test (commit 1) and the fix (commit 2)")
    return steps


def build_report(state: State, settings: Any, completed: dict[str, State],
                 summaries: list[StageSummary] = ()) -> RunReport:
    fs = FuzzState.of(state)
    status, reasons = outcome(state, settings)
    sections = []
    if reasons and status != "Success":
        sections.append(Section("Why not Success", "\n".join(f"- {inline_code(r)}" for r in reasons)))
    if fs.program:
        sections.append(Section("Failing program" + (" (minimized)" if state.get("minimized") else ""),
                                fence(fs.program, "python")))
    failing_run = next((d for d in fs.devices if d.fails), None)
    if failing_run:
        sections.append(Section("Error", fence(failing_run.output[-2500:])))
    if fs.fix.get("questions"):
        sections.append(Section("Fix summary", no_mentions(fs.fix["questions"])))
    for key in ("unmarked", "marked"):
        check = fs.verification.get(key)
        if check and not check["ok"]:
            sections.append(Section("Test output", fence(check["output"])))
    for check in (fs.fix.get("checks") or {}).values():
        if not check["ok"] and check.get("output"):
            sections.append(Section("Fix check output", fence(check["output"])))
    if state.get("fuzz_output") and not fs.program:
        sections.append(Section("Fuzzer output", fence(state["fuzz_output"][-3000:])))
    return RunReport(
        title=f"Fuzz bug: {fs.job.label} ({fs.job.repo})",
        status=status,
        summary=f"{fs.error} on {', '.join(fs.failing_devices) or 'every run'}" if fs.error else "",
        pr_url=state.get("pr_url"),
        test_created=(f"{fs.generated['path']}::{fs.generated['name']}" if fs.generated else None),
        changes=_changes(fs, state),
        stages=stage_lines(list(summaries), completed),
        next_steps=_next_steps(fs, state, status),
        contacts=[],
        facts=_facts(fs, state),
        sections=sections,
    )
