"""The progression run's typed state: what each stage of a re-check found.

Params (set by the scheduler, `schedule.params_for`) carry the inputs; the state carries the
answers. `verdict` is the run's: `reproduces`, `fixed`, `passes-now`, `inconclusive` (could not
tell: the build did not install, the repro did something else) or `closed` (closed on GitHub
meanwhile: nothing to check). `transition` is what `publish` wrote about ("reproduces ->
fixed"); empty when the state did not change, and then nothing was written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Callable

from app.engine.verdict.culprit import Culprit
from app.pipelines.kit.narrowing import Narrowing
from app.pipelines.state import PipelineState


@dataclass
class ProgressionState(PipelineState):
    DECODE: ClassVar[dict[str, Callable[[Any], Any]]] = {"culprit": Culprit.from_dict,
                                                         "narrowing": Narrowing.from_dict}

    # check
    needs_gpu: bool = False  # the repro or test needs CUDA: the code stages run on repro-gpu
    head: str = ""  # a PR's re-check: the default branch's tip it ran on
    # recheck
    outcome: str = ""  # reproduces, absent, unknown (app.engine.verdict.bisect_probe)
    runs: int = 0
    observed: str = ""  # what the settling run did
    why: str = ""  # unknown: why it could not tell
    witness: str = ""  # why "absent" means fixed (or why it cannot be called fixed)
    witness_holds: bool = False
    verdict: str | None = None
    # culprit, culprit_range, culprit_commits, culprit_pr
    culprit: Culprit | None = None
    narrowing: Narrowing | None = None  # where the culprit search is (`app.pipelines.kit.narrowing`)
    range_note: str = ""  # a PR's fix: the commits it lies in
    # publish
    transition: str = ""
    published: list[str] = field(default_factory=list)
