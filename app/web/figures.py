"""The figures a run page shows, read from its stages' stored outputs (issue and CI pipelines):
the failure signature, the failure rate with its Wilson interval, the bisection per release,
the repro (original, minimized) and what it printed.

Plain data, no HTML: `app.web.run_page` renders it. A stage that never ran leaves its figure out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable

from app.db.models import StageEvent

Z_95 = 1.959964


def wilson_interval(failures: int, runs: int, z: float = Z_95) -> tuple[float, float]:
    """95% Wilson score interval of a failure rate (exact at 0 and `runs`, never outside [0, 1])."""
    if runs <= 0:
        return 0.0, 1.0
    p = failures / runs
    denominator = 1 + z * z / runs
    centre = (p + z * z / (2 * runs)) / denominator
    half = z * math.sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


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
    state = state_of(stages)
    found = Figures()
    reproduction = _dict(state.get("reproduction"))
    result = _dict(reproduction.get("result"))
    job = _dict(state.get("job")) or _dict((params or {}).get("failure"))
    source = result or job
    found.signature = {k: str(source[k]) for k in ("exception", "message", "signature") if source.get(k)}
    found.flakiness = _flakiness(reproduction, _dict(state.get("rerun")))
    found.bisection = _bisection(_dict(state.get("bisect")))
    repro = _dict(state.get("repro"))
    if isinstance(repro.get("source"), str):
        found.repro = {k: repro.get(k) for k in ("source", "author", "url")}
    minimized = _dict(state.get("minimized"))
    found.minimized = minimized.get("source") if isinstance(minimized.get("source"), str) else None
    found.output_tail = str(result.get("output_tail") or state.get("rerun_output") or "")
    found.findings = [f for f in state.get("findings") or [] if isinstance(f, dict)]
    found.environment = {key: str(result[name]) for key, name in (("torch", "torch_version"), ("python", "python"),
                                                                  ("label", "environment")) if result.get(name)}
    return found


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _flakiness(reproduction: dict[str, Any], rerun: dict[str, Any]) -> Flakiness | None:
    if rerun.get("runs"):
        source, runs, failures = rerun, int(rerun["runs"]), int(rerun.get("failures") or 0)
    elif reproduction.get("runs"):
        source, runs, failures = reproduction, int(reproduction["runs"]), int(reproduction.get("reproduced") or 0)
    else:
        return None
    stored = source.get("interval")  # what the stage computed (and the report says), when it kept it
    if isinstance(stored, (list, tuple)) and len(stored) == 2 and all(isinstance(v, (int, float)) for v in stored):
        return Flakiness(failures, runs, float(stored[0]), float(stored[1]))
    low, high = wilson_interval(failures, runs)
    return Flakiness(failures, runs, low, high)


def _bisection(found: dict[str, Any]) -> Bisection | None:
    """Newer runs store `releases` (untested ones included) and `changed_between`; older ones
    only `probes` (every release tested) and a certain `first_changed`."""
    releases = [r for r in found.get("releases") or [] if isinstance(r, dict) and r.get("label") is not None]
    probes = _dict(found.get("probes"))
    if not releases and not probes:
        return None
    between = found.get("changed_between")
    span = (str(between[0]), str(between[1])) if isinstance(between, list) and len(between) == 2 else None
    if not releases:
        return Bisection([(str(k), bool(v)) for k, v in probes.items()], found.get("first_changed"),
                         found.get("last_unchanged"), span)
    rows = [(str(r["label"]), None if r.get("outcome") is None else bool(r["outcome"])) for r in releases]
    return Bisection(rows, found.get("first_changed"), found.get("last_unchanged"), span,
                     why={str(r["label"]): str(r.get("why") or "") for r in releases if r.get("outcome") is None},
                     runs={str(r["label"]): r["runs"] for r in releases if isinstance(r.get("runs"), int)})
