"""A stage that has work only sometimes, and does it on the side of the trust split it belongs to.

`Routed(needed, work, queue, idle)` is a stage's function and its queue rule in one: when
`needed(state)`, the stage runs `work` on `queue(state)` (the default queue for a GitHub read,
a repro queue for a probe); otherwise it is recorded as skipped on `idle(state)`, the queue its
neighbours run on, so a stage with nothing to do costs no handoff. Both halves read the same
state, so `work` never runs anywhere but on `queue`: a `Routed` whose `queue` is the default
queue is a stage whose work is the trusted side's, which `tests/pipelines/test_repro_github.py`
relies on when it checks that no repro stage reads GitHub.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from app.pipelines.base import DEFAULT_QUEUE, QueueRule, RunContext, Stage, StageResult


def on_default(state: Any) -> str:
    """The queue rule of trusted work (GitHub, the database)."""
    return DEFAULT_QUEUE


@dataclass(frozen=True)
class Routed:
    needed: Callable[[Any], bool]
    work: Callable[[RunContext, Any], StageResult]
    queue: QueueRule
    idle: QueueRule
    why_idle: str = "nothing to do"

    def run(self, ctx: RunContext, state: Any) -> StageResult:
        if not self.needed(state):
            return StageResult(summary=self.why_idle, skipped=True)
        return self.work(ctx, state)

    def route(self, state: Any) -> str:
        return self.queue(state) if self.needed(state) else self.idle(state)

    @property
    def trusted(self) -> bool:
        """Its work runs on the default queue only."""
        return self.queue is on_default

    def stage(self, name: str, state: Any, *, optional: bool = True) -> Stage:
        return Stage(name, self.run, queue=self.route, optional=optional, state=state)


__all__ = ["Routed", "on_default"]
