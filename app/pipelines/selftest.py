"""A pipeline with no dependencies (no GitHub, no torch) that exercises the machinery:
a stage on `default`, a handoff to `repro-cpu`, an artifact, and an optional approval gate
(params `{"needs_approval": true}` waits until `approved_by` is set).
"""

from __future__ import annotations

from app.pipelines.base import CPU_QUEUE, RunContext, Stage, StageResult, State, on_queue


def greet(ctx: RunContext, state: State) -> StageResult:
    if ctx.params.get("needs_approval") and not ctx.params.get("approved_by"):
        return StageResult(summary="waiting for approval", wait=True)
    return StageResult(summary="hello", output={"greeting": f"hello from run {ctx.run_id}"})


def work(ctx: RunContext, state: State) -> StageResult:
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
