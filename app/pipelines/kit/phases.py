"""The phase clock and halting: what every phased job (CI failure, dispatch, fuzz) shares.

- Phase clock: seed 002's time limits (reproduce, fix, PR), read from settings. A phase starts
  with its first stage on the worker that does the work (reproduce: checkout; fix; PR:
  publish), so time spent queued does not count; the start is a wall-clock time stored in the
  state, so a stage resumed on another worker counts from the phase's real start.
- Halting: a stage that must stop the job (a phase past its limit, nothing to reproduce)
  records a `Halt` in the state; later stages skip and the report stage says why.
- `PhasedState`: the fields every phased job's state has (the phase clocks, the halt, the
  build of the commit under test); the CI job's and the fuzz job's states extend it.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Callable

from app.pipelines.base import RunContext, StageResult, State
from app.pipelines.state import PipelineState
from app.settings import Settings

# Each phase's time limit, from its SCRUB_PHASE_*_S setting.
PHASE_LIMITS: dict[str, Callable[[Settings], float]] = {
    "reproduce": lambda settings: settings.phase_reproduce_s,
    "fix": lambda settings: settings.phase_fix_s,
    "pr": lambda settings: settings.phase_pr_s,
}


@dataclass(frozen=True)
class PhaseClock:
    phase: str
    started: float  # wall clock (time.time), stored in the state
    limit_s: float

    @property
    def remaining_s(self) -> float:
        return self.started + self.limit_s - time.time()

    @property
    def expired(self) -> bool:
        return self.remaining_s <= 0

    def state(self) -> State:
        return {f"phase_{self.phase}_started": self.started}

    def exceeded(self, where: str, detail: str = "") -> dict[str, str]:
        """`halt(...)` keywords: the reason, this phase and the stage `where` it ran out."""
        reason = f"the {self.phase} phase passed its {self.limit_s:g} s limit during {where}"
        return {"phase": self.phase, "stage": where, "reason": reason + (f" ({detail})" if detail else "")}


@dataclass(frozen=True)
class Halt:
    """Why a job stopped early, and what its report's status is (Partial or Failed)."""

    reason: str
    status: str
    phase: str = ""  # the phase whose time limit stopped it, if any
    stage: str = ""  # where that happened

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Halt:
        return cls(**{k: str(v) for k, v in data.items() if k in {f.name for f in fields(cls)}})


@dataclass
class PhasedState(PipelineState):
    """What every phased job (CI failure, dispatch, fuzz) keeps besides its own findings."""

    phase_reproduce_started: float | None = None
    phase_fix_started: float | None = None
    phase_pr_started: float | None = None
    halt: Halt | None = None
    # The build of the commit under test (app.pipelines.kit.build): a `BuildPlan` as a dict.
    build: dict[str, Any] = field(default_factory=dict)

    def phase_started(self, phase: str) -> float | None:
        return {"reproduce": self.phase_reproduce_started, "fix": self.phase_fix_started,
                "pr": self.phase_pr_started}[phase]


PHASED_DECODE = {"halt": Halt.from_dict}


def phase_clock(ctx: RunContext, state: PhasedState, phase: str) -> PhaseClock:
    """The clock of `phase`; started now if no earlier stage of the phase started it."""
    limit = float(PHASE_LIMITS[phase](ctx.settings))
    started = state.phase_started(phase) or time.time()
    return PhaseClock(phase, float(started), limit)


def halted(state: PhasedState) -> StageResult | None:
    """A skip result when an earlier stage halted the job, else None."""
    if state.halt:
        return StageResult(summary=f"skipped: {state.halt.reason}", skipped=True)
    return None


def halt(summary: str, reason: str, *, status: str, extra: State | None = None, **where: str) -> StageResult:
    """End the job's work here; `status` is the report's (Partial / Failed)."""
    output = {"halt": Halt(reason=reason, status=status, **where), **(extra or {})}
    return StageResult(summary=summary, output=output)
