"""A `Routed` stage works on its queue when there is work, and is skipped on its neighbours'
queue when there is none: no handoff for nothing, and its work never runs anywhere else."""

from __future__ import annotations

from app.pipelines.base import (
    CPU_QUEUE,
    DEFAULT_QUEUE,
    Finished,
    Handoff,
    Stage,
    StageResult,
    run_pipeline,
)
from app.pipelines.kit.routed import Routed, on_default
from app.pipelines.memory import MemoryRunContext
from app.pipelines.state import PlainState


def read(ctx, state):
    ctx.log(f"read on {ctx.queue}")
    return StageResult(summary="read", output={"read": True})


STAGES = [Stage("probe", lambda ctx, state: StageResult(output={"probed": True}), queue=lambda s: CPU_QUEUE),
          Routed(lambda state: state.get("wanted", False), read, on_default, lambda s: CPU_QUEUE,
                 "nothing to read").stage("read", PlainState),
          Stage("probe_more", lambda ctx, state: StageResult(), queue=lambda s: CPU_QUEUE)]


def test_with_work_it_asks_for_its_queue():
    ctx = MemoryRunContext(queue=CPU_QUEUE)
    assert run_pipeline(STAGES, ctx, {"wanted": True}) == Handoff(DEFAULT_QUEUE, "read")
    ctx.queue = DEFAULT_QUEUE
    assert run_pipeline(STAGES, ctx, {"wanted": True}) == Handoff(CPU_QUEUE, "probe_more")
    assert ctx.lines.count("read on default") == 1


def test_without_work_it_is_skipped_where_the_run_is():
    ctx = MemoryRunContext(queue=CPU_QUEUE)
    assert run_pipeline(STAGES, ctx, {}) == Finished("succeeded", None)
    assert [(r.stage, r.status, r.summary) for r in ctx.stages][1] == ("read", "skipped", "nothing to read")


def test_only_work_on_the_default_queue_is_trusted_work():
    assert Routed(bool, read, on_default, on_default).trusted
    assert not Routed(bool, read, lambda s: DEFAULT_QUEUE, on_default).trusted  # not known to be constant
