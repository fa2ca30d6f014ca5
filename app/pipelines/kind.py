"""What a run kind declares about itself: `KIND` in its package's `__init__`.

A kind is one package under `app/pipelines/`, named after its `RunKind` value. Its `KIND` is its
whole face: the stages a run goes through, the state they share, the `/scrub` words it answers
(with the rule each follows and its help line), the notices its runs post, and the next step its
report suggests per verdict. The registry (`registry.py`) finds kinds by name; the command
words and the help reply are generated from the kinds (`commands.py`). Kinds never import each
other: what several share is in `app.pipelines.kit`.

A word's rule is one of three:

- `Start(build)`: start a new run of this kind (`build(request)` gives the run, or the usage
  line when the arguments are wrong), whatever the issue's runs.
- `Force(stage, flag)`: set `params[flag]` on the issue's latest run of this kind and redo
  `stage` and what follows it; with no run yet, start one (`Kind.start`) with the flag set.
- `Lifecycle(action)`: approve, retry or cancel the issue's latest run of this kind (`retry`
  with no run yet starts one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.domain import CommandRequest, Lifecycle, NewRun, RunKind
from app.pipelines.base import Stage

__all__ = ["Force", "Kind", "Lifecycle", "NewRun", "Start", "Word"]


@dataclass(frozen=True)
class Start:
    build: Callable[[CommandRequest], NewRun | str]  # the run, or the usage when the arguments are wrong


@dataclass(frozen=True)
class Force:
    stage: str
    flag: str  # the run param the stage reads (`force_bisect`)


Rule = Start | Force | Lifecycle


@dataclass(frozen=True)
class Word:
    """A `/scrub` word and what it does; `help` is its line in the help reply."""

    word: str
    rule: Rule
    help: str
    usage: str = ""  # how to type it when it takes arguments (`fuzz <seed>`); the word otherwise

    @property
    def help_line(self) -> str:
        return f"- `/scrub {self.usage or self.word}`: {self.help}"


@dataclass(frozen=True)
class Kind:
    name: RunKind
    stages: tuple[Stage, ...]
    state: Any  # the stages' state class (a `PipelineState`, or `PlainState`)
    words: tuple[Word, ...] = ()
    # How a command starts a run of this kind on an issue that has none (`retry`, a `Force`
    # word): the request and the word typed -> the run. None: such words need a run.
    start: Callable[[CommandRequest, str], NewRun] | None = None
    notices: tuple[str, ...] = ()  # the notices its runs post (`app.engine.report.render.NOTICE_KINDS`)
    next_steps: Mapping[str, str] = field(default_factory=dict)  # verdict -> the report's next step

    @property
    def stage_names(self) -> tuple[str, ...]:
        return tuple(stage.name for stage in self.stages)
