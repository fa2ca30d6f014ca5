"""The figures a run page shows, read from its stages' stored outputs (issue and CI pipelines):
the failure signature, the failure rate with its Wilson interval, the bisection per release,
the repro (original, minimized) and what it printed.

The state is read through `app.runstate.RunView`, the typed records the pipelines store (the
same `Reproduction`, `Minimized`, `RerunSummary` classes), never key by key. Plain data, no
HTML: `app.web.run_page` renders it. A stage that never ran leaves its figure out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from app.db.models import StageEvent
from app.runstate import Reproduction, RerunSummary, RunView, ShownBisection, wilson_interval

__all__ = ["Bisection", "Figures", "Flakiness", "figures", "state_of", "wilson_interval"]


@dataclass
class Flakiness:
    failures: int
    runs: int
    low: float
    high: float

    @property
    def rate(self) -> float:
        return self.failures / self.runs if self.runs else 0.0


@dataclass
class Bisection:
    releases: list[tuple[str, bool | None]]  # (environment, reproduces there; None: untested), oldest first
    first_changed: str | None  # set only when the boundary is certain
    last_unchanged: str | None
    # A change next to releases that could not be tested: the tested releases around it.
    changed_between: tuple[str, str] | None = None
    why: dict[str, str] = field(default_factory=dict)  # why a release could not be tested
    runs: dict[str, int] = field(default_factory=dict)  # runs each release took (0: known before)


@dataclass
class Figures:
    signature: dict[str, str] = field(default_factory=dict)  # exception, message, signature
    flakiness: Flakiness | None = None
    bisection: Bisection | None = None
    repro: dict[str, Any] | None = None  # source, author, url
    minimized: str | None = None
    output_tail: str = ""  # what the repro (or the rerun test) printed last
    findings: list[dict[str, Any]] = field(default_factory=list)  # the security review's
    environment: dict[str, str] = field(default_factory=dict)  # where it ran: torch, python, label


def state_of(stages: Iterable[StageEvent]) -> dict[str, Any]:
    """The pipeline state as the stages left it: their outputs merged in order."""
    state: dict[str, Any] = {}
    for event in stages:
        if isinstance(event.output, dict):
            state.update(event.output)
    return state


def figures(stages: Iterable[StageEvent], params: dict[str, Any] | None = None) -> Figures:
    view = RunView.load(state_of(stages))
    found = Figures()
    result = view.shown_run
    failure = view.job or RunView.load({"job": (params or {}).get("failure")}).job
    if result:  # what the run shown printed, else the CI job's failure
        found.signature = {k: str(result[k]) for k in ("exception", "message", "signature") if result.get(k)}
    elif failure:
        found.signature = {k: v for k, v in vars(failure).items() if v}
    found.flakiness = _flakiness(view.reproduction, view.rerun)
    found.bisection = _bisection(view.bisect)
    if view.repro:
        found.repro = {"source": view.repro.source, "author": view.repro.author or None,
                       "url": view.repro.url or None}
    found.minimized = view.minimized.source if view.minimized and isinstance(view.minimized.source, str) else None
    found.output_tail = str(result.get("output_tail") or view.rerun_output or "")
    found.findings = view.findings
    found.environment = {key: str(result[name]) for key, name in (("torch", "torch_version"), ("python", "python"),
                                                                  ("label", "environment")) if result.get(name)}
    return found


def _flakiness(reproduction: Reproduction | None, rerun: RerunSummary | None) -> Flakiness | None:
    if rerun and rerun.get("runs"):
        runs, failures, stored = int(rerun.runs), int(rerun.failures or 0), rerun.interval
    elif reproduction and reproduction.runs:
        runs, failures, stored = int(reproduction.runs), int(reproduction.reproduced or 0), reproduction.interval
    else:
        return None
    # what the stage computed (and the report says), when it kept it
    if isinstance(stored, (list, tuple)) and len(stored) == 2 and all(isinstance(v, (int, float)) for v in stored):
        return Flakiness(failures, runs, float(stored[0]), float(stored[1]))
    low, high = wilson_interval(failures, runs)
    return Flakiness(failures, runs, low, high)


def _bisection(found: ShownBisection | None) -> Bisection | None:
    """Newer runs store `releases` (untested ones included) and `changed_between`; older ones
    only `probes` (every release tested) and a certain `first_changed`."""
    if found is None or (not found.releases and not found.probes):
        return None
    span = (found.changed_between[0], found.changed_between[1]) if found.changed_between else None
    if not found.releases:
        return Bisection([(str(k), bool(v)) for k, v in found.probes.items()], found.first_changed,
                         found.last_unchanged, span)
    rows = [(str(r["label"]), None if r.get("outcome") is None else bool(r["outcome"])) for r in found.releases]
    return Bisection(rows, found.first_changed, found.last_unchanged, span,
                     why={str(r["label"]): str(r.get("why") or "") for r in found.releases if r.get("outcome") is None},
                     runs={str(r["label"]): r["runs"] for r in found.releases if isinstance(r.get("runs"), int)})
