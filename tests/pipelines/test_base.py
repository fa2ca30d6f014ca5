"""`run_pipeline` over typed state: views per stage, checked outputs, JSON on the way out."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from app.domain import WORKER_LOST, StageStatus
from app.pipelines.base import Finished, Handoff, Stage, StageResult, run_pipeline
from app.pipelines.memory import MemoryRunContext, StageRecord
from app.pipelines.state import PipelineState, UnknownStateField
from app.settings import Settings


@dataclass(frozen=True)
class Seen:
    words: int

    def to_dict(self):
        return {"words": self.words}

    @classmethod
    def from_dict(cls, data):
        return cls(**data)


@dataclass
class WordState(PipelineState):
    DECODE = {"seen": Seen.from_dict}

    text: str = ""
    seen: Seen | None = None
    verdict: str | None = None


def _context(tmp_path, **kw):
    return MemoryRunContext(settings=Settings(data_dir=tmp_path), params={}, **kw)


def read(ctx, state: WordState) -> StageResult:
    return StageResult(summary="read", output={"text": "a b c"})


def count(ctx, state: WordState) -> StageResult:
    assert isinstance(state, WordState)  # a typed view, not the stored dict
    return StageResult(summary="counted", output={"seen": Seen(len(state.text.split()))})


def judge(ctx, state: WordState) -> StageResult:
    return StageResult(summary="judged", output={"verdict": f"{state.seen.words} words"})


def _stages(*fns, **kw):
    return [Stage(fn.__name__, fn, state=WordState, **kw) for fn in fns]


def test_each_stage_sees_the_typed_state_and_typed_outputs_are_stored_as_json(tmp_path):
    ctx = _context(tmp_path)
    finished = run_pipeline(_stages(read, count, judge), ctx, any_queue=True)
    assert finished == Finished("succeeded", "3 words")
    assert ctx.completed_stages()["count"] == {"seen": {"words": 3}}


def test_a_retry_loads_done_stages_from_their_stored_json(tmp_path):
    ctx = _context(tmp_path)
    run_pipeline(_stages(read, count), ctx, any_queue=True)
    # a later task of the same run: the done stages are not run again, their outputs are loaded
    assert run_pipeline(_stages(read, count, judge), ctx, any_queue=True).verdict == "3 words"


def test_an_output_key_the_state_does_not_declare_fails_the_stage(tmp_path):
    def typo(ctx, state):
        return StageResult(summary="oops", output={"verdcit": "x"})

    ctx = _context(tmp_path)
    with pytest.raises(UnknownStateField, match="verdcit"):
        run_pipeline(_stages(typo), ctx, any_queue=True)
    assert "typo" not in ctx.completed_stages()


def test_the_queue_rule_reads_the_typed_state(tmp_path):
    stages = [*_stages(read), Stage("count", count, state=WordState,
                                    queue=lambda s: "repro-gpu" if "b" in s.text else "repro-cpu")]
    handoff = run_pipeline(stages, _context(tmp_path))
    assert handoff == Handoff(queue="repro-gpu", stage="count")


def test_a_failed_optional_stage_is_not_run_again_on_resume_unless_its_worker_was_lost(tmp_path):
    ran = []

    def work(ctx, state):
        ran.append(ctx.run_id)
        return StageResult(summary="worked")

    stages = [Stage("minimize", work, optional=True), Stage("report", lambda ctx, state: StageResult())]
    broke = MemoryRunContext(run_id=1, settings=Settings(data_dir=tmp_path),
                             stages=[StageRecord("minimize", StageStatus.failed, "RuntimeError: broke")])
    lost = MemoryRunContext(run_id=2, settings=Settings(data_dir=tmp_path),
                            stages=[StageRecord("minimize", StageStatus.failed, f"{WORKER_LOST} (attempt 1)")])
    assert run_pipeline(stages, broke) == Finished("succeeded", None)
    assert run_pipeline(stages, lost) == Finished("succeeded", None)
    assert ran == [2]  # the run went on without the broken one; the lost worker's stage ran again
