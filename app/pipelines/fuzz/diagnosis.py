"""The fuzz job's `diagnose` stage: the experiments the program's failure calls for.

After `reproduce` (and `minimize`), the program as it fails on its first failing device is the
subject; each variant (a backend of the ladder, dynamic shapes, compiled against eager, the first
NaN...) replaces the program for one run over the checkout in the sandbox, as the reproduce stage
runs it. A run "fails the same way" when it raises the reproduced exception class. The phase's
clock bounds it: at most half of what is left of the reproduce phase (and
`SCRUB_EXPERIMENTS_BUDGET_S`). The fuzzer's runs pin PYTHONHASHSEED, so hash order is fixed.
"""

from __future__ import annotations

from app.engine.diagnosis import Subject, diagnose_repro
from app.engine.fuzz.program import on_device
from app.engine.fuzz.treework import PROGRAM_FILE
from app.engine.minimize.oracle import signature_of
from app.pipelines.base import RunContext, StageResult
from app.pipelines.fuzz.state import FuzzState
from app.pipelines.kit.checkout import ensure_checkout
from app.pipelines.kit.experiments import TreeVariantRunner, script_description
from app.pipelines.kit.phases import halted, phase_clock
from app.pipelines.kit.sandbox import run_timeout, tree_runner

MIN_BUDGET_S = 10.0


def diagnose_stage(ctx: RunContext, state: FuzzState) -> StageResult:
    if skip := halted(state):
        return skip
    clock = phase_clock(ctx, state, "reproduce")
    budget = min(float(ctx.settings.experiments_budget_s), clock.remaining_s / 2)
    if budget < MIN_BUDGET_S:
        return StageResult(summary=f"no time for experiments ({budget:.0f} s)", skipped=True)
    device = state.failing_devices[0] if state.failing_devices else ""
    source = on_device(state.program, device) if device else state.program
    failing = next((d for d in state.devices if d.fails), None)
    subject = Subject(source=source, failure=state.error, output=failing.output if failing else "",
                      gpu=bool(ctx.settings.gpu), timeout_s=run_timeout(ctx, clock), hash_seed_fixed=True)
    wanted = state.exception

    def judge(process, variant) -> bool:
        found = signature_of(process, variant.source)
        return found is not None and found.describe().split(":", 1)[0].strip() == wanted

    tree = tree_runner(ctx, ensure_checkout(ctx, state.job))
    run = TreeVariantRunner(tree, PROGRAM_FILE, [PROGRAM_FILE], judge, script_description)
    report = diagnose_repro(subject, run, budget_s=budget)
    ran = len(report.ran)
    summary = f"{report.pattern or 'no pattern'}: {ran} experiment{'s' if ran != 1 else ''} ran" + (
        f"; {report.ran[0].line}" if ran else "")
    return StageResult(summary=summary[:300], output={"diagnosis": report, **clock.state()})
