"""The issue's `diagnose` stage: the experiments its failure calls for, run and reported as facts.

Runs when the repro reproduces (or fails with an out-of-memory instead of the reported error:
smaller sizes may show the bug). The subject is the minimized repro when there is one, else the
repro that ran; every variant is judged the way the reproduce stage judges a run (the reported
failure, the stated values, the script's own checks), so "fails the same way" means "still shows
this issue's bug". Variants run warm in a fork server of their own (never shared with another
issue's code), in the same sandbox as the repro, within `SCRUB_EXPERIMENTS_BUDGET_S` in all (0 turns them off).
"""

from __future__ import annotations

import os
from dataclasses import replace

from app.engine.diagnosis import Subject, diagnose_repro
from app.engine.diagnosis.numerics import OOM
from app.engine.verdict import classify as verdicts
from app.pipelines.base import RunContext, StageResult
from app.pipelines.issue import evidence, runner
from app.pipelines.issue.state import IssueState
from app.pipelines.kit.experiments import ScriptRunner, run_dict
from app.pipelines.state import plain

VARIANT_TIMEOUT_S = 120.0  # one variant's run, at most (less when the repro's own timeout is less)


def subject_of(state: IssueState, gpu: bool, timeout_s: float) -> Subject | None:
    reproduction = state.reproduction
    if reproduction is None or state.repro is None:
        return None
    result = reproduction.result or {}
    source = state.minimized.source if state.minimized else state.repro.source
    return Subject(source=source, failure=reproduction.description, output=str(result.get("output_tail") or ""),
                   outcome=str(result.get("outcome") or "error"), runs=int(reproduction.runs or 1),
                   failures=int(reproduction.reproduced or 0) or 1, gpu=gpu, timeout_s=timeout_s,
                   hash_seed_fixed=True)  # every issue run pins PYTHONHASHSEED=0 (runner._spec)


def wanted(state: IssueState) -> str | None:
    """Why the stage has nothing to do, or None when it runs."""
    if state.stop:
        return f"not needed ({state.verdict})"
    if state.reproduction is None:
        return "nothing ran"
    if state.verdict == verdicts.REPRODUCES:
        return None
    if state.verdict == verdicts.DIFFERENT and OOM.search(state.reproduction.description):
        return None  # out of memory here: smaller sizes may still show the reported failure
    return f"not needed: the repro does not reproduce ({state.verdict})"


def diagnose(ctx: RunContext, state: IssueState) -> StageResult:
    if why := wanted(state):
        return StageResult(summary=why, skipped=True)
    settings = ctx.settings
    if not settings.experiments_budget_s:
        return StageResult(summary="experiments are off (SCRUB_EXPERIMENTS_BUDGET_S=0)", skipped=True)
    subject = subject_of(state, bool(settings.gpu), min(float(settings.repro_timeout), VARIANT_TIMEOUT_S))
    reported = plain(state.reported)
    args = evidence.judge_args(state, subject.source)
    if state.verdict == verdicts.DIFFERENT:
        subject = replace(subject, runs=1, failures=1)

    def judge(process, variant) -> bool:
        return verdicts.classify(reported, run_dict(process, subject.timeout_s), source=subject.source,
                                 **args) == verdicts.REPRODUCES

    label = (state.reproduction.result or {}).get("environment") or runner.current_label(settings)
    spec = runner._spec(settings, label)
    jobs = 1 if settings.gpu else max(1, min(2, os.cpu_count() or 1))
    with ScriptRunner(spec, judge, jobs=jobs, source=subject.source) as run:
        report = diagnose_repro(subject, run, budget_s=settings.experiments_budget_s, parallel=jobs)
    ran = len(report.ran)
    summary = (f"{report.pattern or 'no pattern'}: {ran} experiment{'s' if ran != 1 else ''} ran"
               + (f"; {report.ran[0].line}" if ran else ""))
    return StageResult(summary=summary[:300], output={"diagnosis": report})
