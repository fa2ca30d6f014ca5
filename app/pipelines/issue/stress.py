"""`/scrub stress`: seed 004's stress test on the issue's reproducing repro (the kit's core).

Runs only when asked (`force_stress`, set by `/scrub stress`; the command reruns this stage and
the ones after it on the issue's latest run, or starts a run with it) and only on a repro that
reproduces here: the minimized repro when there is one, else the selected one, in the sandbox,
on the environment the reproduction ran on. It keeps a `StressFinding` (`stress`): the failures
per minute and the time to the first failure, which the comment states (`stress_note`, a note
of the comment `report.py` builds) and the run report shows (`stress_section`); the generated
stress file is saved as an artifact.
"""

from __future__ import annotations

from app.domain import Verdict
from app.engine.report.render import Section, fence, inline_code
from app.pipelines.base import RunContext, StageResult
from app.pipelines.issue.state import IssueState
from app.pipelines.kit.stress import StressFinding, Stressed, stress_script

FORCE_STRESS = "force_stress"  # the run param `/scrub stress` sets
WINDOW_S = 60.0  # the measurement window; `stress_window_s` in the run's params overrides
VERIFY_S = 120.0  # what the tuned file's xfail run may take (it stops at its first failure)


def stress(ctx: RunContext, state: IssueState) -> StageResult:
    if not ctx.params.get(FORCE_STRESS):
        return StageResult(summary="not asked (`/scrub stress`)", skipped=True)
    if state.stop or state.verdict != Verdict.reproduces or state.repro is None or state.reproduction is None:
        why = f"the repro does not reproduce here (verdict {state.verdict or 'none'})"
        return StageResult(summary=f"nothing to stress: {why}", skipped=True,
                           output={"stress": StressFinding(measured=False, why_not=why)})
    source = state.minimized.source if state.minimized else state.repro.source
    label = state.reproduction.result.get("environment") or list(ctx.settings.environment_map)[-1]
    reason = f"{state.issue.get('html_url') or 'the issue'}: {state.reproduction.description}"
    found = stress_script(ctx, source, reason, window_s=float(ctx.params.get("stress_window_s", WINDOW_S)),
                          per_iteration_s=min(60.0, float(ctx.settings.repro_timeout)), verify_s=lambda: VERIFY_S,
                          python=ctx.settings.environment_map.get(label))
    if isinstance(found, Stressed):
        ctx.save_artifact(found.test.path.rsplit("/", 1)[-1], "python", found.test.source)
    finding = found.finding()
    return StageResult(summary=finding.sentence()[:300], output={"stress": finding})


def stress_note(found: StressFinding) -> str:
    """The comment's paragraph: the rate and the time to the first failure, and what failed."""
    note = found.sentence()
    if found.measured and found.first_failure:
        note += f" It failed with {inline_code(found.first_failure[:200])}."
    if found.measured:
        target = "meets" if found.meets_budget else "misses"
        note += f" This {target} seed 004's target (a failure within 20 minutes with 95% odds)."
    return note


def stress_section(found: StressFinding) -> Section:
    """The run report's section: the note, the budget check and the stress file (or the output)."""
    detail = [stress_note(found)]
    if found.measured:
        detail.append(f"Budget: {found.budget}. Stress file (an artifact of this run): {inline_code(found.test_path)}; "
                      f"run as written it {'xfails' if found.xfails else 'does not xfail'} ({found.verification}).")
    elif found.output:
        detail.append(fence(found.output, "text"))
    return Section("Stress Test", "\n\n".join(detail))
