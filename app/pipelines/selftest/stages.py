"""A pipeline with no dependencies (no GitHub, no torch) that exercises the machinery:
a stage on `default`, a handoff to `repro-cpu`, an artifact, and an optional approval gate
(params `{"needs_approval": true}` waits until `approved_by` is set), and, for the reliability
tests, a stage that holds (params `{"hold_until": PATH}`: `work` waits until that file exists, at
most `hold_max_s` seconds) so a test can kill or restart things while a run is mid-stage.
"""

from __future__ import annotations

import time
from pathlib import Path

from app.pipelines.base import CPU_QUEUE, RunContext, Stage, StageResult, State, on_queue


def greet(ctx: RunContext, state: State) -> StageResult:
    if ctx.params.get("needs_approval") and not ctx.params.get("approved_by"):
        return StageResult(summary="waiting for approval", wait=True)
    return StageResult(summary="hello", output={"greeting": f"hello from run {ctx.run_id}"})


HOLD_POLL_S = 0.1


def _hold(ctx: RunContext) -> None:
    hold = ctx.params.get("hold_until")
    if not isinstance(hold, str) or not hold:
        return
    deadline = time.monotonic() + float(ctx.params.get("hold_max_s", 60))
    while not Path(hold).exists() and time.monotonic() < deadline:
        time.sleep(HOLD_POLL_S)


def work(ctx: RunContext, state: State) -> StageResult:
    _hold(ctx)
    if ctx.params.get("fail"):
        raise RuntimeError("selftest asked to fail")
    ctx.save_artifact("selftest.md", "markdown", f"# Selftest\n\n{state['greeting']} on {ctx.queue}\n")
    return StageResult(summary="artifact saved", output={"worked_on": ctx.queue}, verdict="selftest passed")


def report(ctx: RunContext, state: State) -> StageResult:
    return StageResult(summary="done", output={"verdict": f"selftest passed on {state['worked_on']}"})


STAGES = [
    Stage("greet", greet),
    Stage("work", work, queue=on_queue(CPU_QUEUE)),
    Stage("report", report),
]
