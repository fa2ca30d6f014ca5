"""The phased jobs' shared parts: the phase clock and halting."""

from __future__ import annotations

import time

from app.pipelines.kit.phases import Halt, PhasedState, halt, halted, phase_clock
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings


def _ctx(tmp_path, **settings):
    return MemoryRunContext(settings=Settings(data_dir=tmp_path, **settings))


def test_a_phase_clock_counts_from_the_start_an_earlier_stage_stored(tmp_path):
    started = time.time() - 50
    clock = phase_clock(_ctx(tmp_path, phase_reproduce_s=60), PhasedState(phase_reproduce_started=started), "reproduce")
    assert clock.started == started and 0 < clock.remaining_s <= 10
    assert clock.state() == {"phase_reproduce_started": started}


def test_a_phase_clock_past_its_limit_is_expired_and_says_where(tmp_path):
    clock = phase_clock(_ctx(tmp_path, phase_fix_s=5), PhasedState(phase_fix_started=time.time() - 6), "fix")
    assert clock.expired
    assert clock.exceeded("fix", "stopped") == {"phase": "fix", "stage": "fix",
                                                "reason": "the fix phase passed its 5 s limit during fix (stopped)"}


def test_a_phase_not_started_yet_starts_now(tmp_path):
    before = time.time()
    clock = phase_clock(_ctx(tmp_path), PhasedState(), "pr")
    assert clock.started >= before and not clock.expired


def test_halt_records_a_typed_halt_and_later_stages_skip_with_its_reason():
    result = halt("checkout failed", "checkout failed: no such commit", status="Failed", extra={"commit": "x"})
    assert result.output == {"halt": Halt("checkout failed: no such commit", "Failed"), "commit": "x"}
    skip = halted(PhasedState(halt=result.output["halt"]))
    assert skip.skipped and skip.summary == "skipped: checkout failed: no such commit"
    assert halted(PhasedState()) is None
