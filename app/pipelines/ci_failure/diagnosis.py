"""The CI job's `diagnose` stage: the experiments the failure calls for, on the failing test.

After the reruns decided deterministic or flaky, the catalog's patterns for the CI failure (its
`Exception: message` and the last rerun's output) pick the experiments; each variant is the test
file transformed (a backend, `num_workers=0`, a prologue that fixes the seeds...) placed over
the checkout for that run only, and `pytest <node>` runs in the sandbox as the reruns did. A run
"fails the same way" when the rerun rule says so (`app.engine.verdict.rerun.outcome_of`). The
experiments share the reproduce phase: they get at most half of what is left of it (and
`SCRUB_EXPERIMENTS_BUDGET_S`), so the test stage keeps its time.
"""

from __future__ import annotations

from pathlib import Path

from app.engine.diagnosis import Subject, diagnose_repro
from app.engine.git.tree import UnsafePath, read_text
from app.engine.sandbox.treerun import pytest_argv
from app.engine.verdict import rerun as reruns
from app.pipelines.base import RunContext, StageResult
from app.pipelines.ci_failure.state import CIState, job_of
from app.pipelines.kit.checkout import ensure_checkout
from app.pipelines.kit.experiments import TreeVariantRunner
from app.pipelines.kit.phases import halted, phase_clock
from app.pipelines.kit.sandbox import run_timeout, tree_runner

MIN_BUDGET_S = 10.0


def diagnose_stage(ctx: RunContext, state: CIState) -> StageResult:
    if skip := halted(state):
        return skip
    job, clock = job_of(state), phase_clock(ctx, state, "reproduce")
    budget = min(float(ctx.settings.experiments_budget_s), clock.remaining_s / 2)
    if budget < MIN_BUDGET_S:
        return StageResult(summary=f"no time for experiments ({budget:.0f} s)", skipped=True)
    worktree = ensure_checkout(ctx, job)
    try:
        source = read_text(Path(worktree), state.test_file)
    except UnsafePath as exc:
        return StageResult(summary=f"no experiments: {exc}", skipped=True)
    rerun = state.rerun or {}
    subject = Subject(source=source, failure=job.failure_line, output=state.rerun_output,
                      runs=int(rerun.get("runs") or 1), failures=int(rerun.get("failures") or 1),
                      gpu=bool(ctx.settings.gpu), timeout_s=run_timeout(ctx, clock), hash_seed_fixed=False)

    def judge(process, variant) -> bool:
        return reruns.outcome_of(process, exception=job.exception, kind=job.kind) == reruns.FAIL

    run = TreeVariantRunner(tree_runner(ctx, worktree), state.test_file, pytest_argv(state.node_id), judge)
    report = diagnose_repro(subject, run, budget_s=budget)
    ran = len(report.ran)
    summary = f"{report.pattern or 'no pattern'}: {ran} experiment{'s' if ran != 1 else ''} ran" + (
        f"; {report.ran[0].line}" if ran else "")
    return StageResult(summary=summary[:300], output={"diagnosis": report, **clock.state()})
