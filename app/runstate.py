"""A run's stored state, typed once for every layer that reads it.

The pipelines keep a run's state as JSON (their stage outputs, merged in order). The parts read
outside the pipeline that wrote them, by the status page (`app/web/figures.py`) and `/metrics`
(`app/db/stats.py`), are typed here, in a module any layer may import (it imports only
`app.domain`; an import-linter contract keeps it so):

- `Reproduction`, `Minimized`: the issue pipeline's own state types (`IssueState.reproduction`,
  `.minimized` are these classes);
- `RerunSummary`: the CI job's reruns (`CIState.rerun`; the engine's `Sequential.summary()`);
- `RunView.load(state)`: the read-only view the page and the metrics read a run through: the
  types above, and for the parts a pipeline types with an engine class the web may not import
  (`Repro`, `BisectResult`, `CIJob`, `Finding`), records of their stored shape (`ShownRepro`,
  `ShownBisection`, `ShownFailure`), checked against those classes' `to_dict()` by
  `tests/test_runstate.py`. Loading never fails on a malformed part: it reads as missing.

Also here: the one `wilson_interval` (the engine computes the rates a stage stores; the page
recomputes it for runs stored without one).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from app.domain import from_known

Json = dict[str, Any]
T = TypeVar("T")
Z_95 = 1.959963984540054


def wilson_interval(failures: int, runs: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval of a failure rate (95% by default): exact at 0 and `runs`, never
    outside [0, 1]; (0, 1) for no runs."""
    if runs <= 0:
        return (0.0, 1.0)
    p = failures / runs
    denom = 1 + z * z / runs
    centre = (p + z * z / (2 * runs)) / denom
    half = z * math.sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs)) / denom
    lo = 0.0 if failures == 0 else max(0.0, centre - half)
    hi = 1.0 if failures == runs else min(1.0, centre + half)
    return (lo, hi)


@dataclass(frozen=True)
class Reproduction:
    """The issue's reproduce stage: the verdict over every sandboxed run and the run that shows it."""

    verdict: str = ""
    flaky_ratio: str | None = None  # "2/5" when the runs disagree
    runs: int = 0
    reproduced: int = 0  # runs that reproduced
    rate: float | None = None  # the failure rate and its 95% Wilson interval
    interval: list[float] | None = None
    outcomes: dict[str, int] = field(default_factory=dict)  # each run's outcome, counted (for /metrics)
    result: Json = field(default_factory=dict)  # the run shown: `runner.run_once`'s dict
    description: str = ""
    # Set when a pass here was not taken as `fixed`: the report is from this platform.
    platform: str | None = None
    modes: dict[str, int] = field(default_factory=dict)  # runs per mode: cold (fresh interpreter), fork (warm)
    # Set when the chosen repro did not show the failure and another block did (it then ran).
    switched_from: str | None = None

    def to_dict(self) -> Json:
        data = asdict(self)
        for key in ("platform", "switched_from", "modes"):
            if not data[key]:
                del data[key]
        return data

    @classmethod
    def from_dict(cls, data: Json) -> Reproduction:
        return from_known(cls, data)


@dataclass(frozen=True)
class Minimized:
    """The issue's minimize stage: the smaller repro, re-checked cold."""

    source: str
    original_lines: int = 0
    final_lines: int = 0
    candidates: int = 0  # candidates tried
    wall_s: float = 0.0
    timed_out: bool = False

    def to_dict(self) -> Json:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Json) -> Minimized:
        return from_known(cls, data)


_RERUN_KEYS = ("runs", "failures", "other_failures", "timeouts", "errors", "rate", "interval")


@dataclass(frozen=True, eq=False)
class RerunSummary(Mapping[str, Any]):
    """The CI job's reruns in the sandbox (`app.engine.verdict.rerun.Sequential.summary()`).

    Also readable as the mapping it is stored as (`summary["interval"]`, `summary.get("runs")`,
    `summary == {...}`), with the keys it was stored with: a summary loaded from a run stored
    by an older version keeps its shape (and an empty one is `{}`, falsy)."""

    runs: int = 0
    failures: int = 0
    other_failures: int = 0
    timeouts: int = 0
    errors: int = 0
    rate: float = 0.0
    interval: list[float] | None = None  # the failure rate's 95% Wilson interval
    keys_stored: frozenset[str] = field(default=frozenset(_RERUN_KEYS), repr=False)

    def to_dict(self) -> Json:
        return {key: getattr(self, key) for key in self}

    @classmethod
    def from_dict(cls, data: Json) -> RerunSummary:
        known = {k: v for k, v in (data or {}).items() if k in _RERUN_KEYS}
        return cls(**known, keys_stored=frozenset(known))

    @property
    def passed(self) -> int:
        return max(0, self.runs - self.failures - self.other_failures - self.timeouts - self.errors)

    def __getitem__(self, key: str) -> Any:
        if key not in self.keys_stored:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return (key for key in _RERUN_KEYS if key in self.keys_stored)

    def __len__(self) -> int:
        return len(self.keys_stored)


@dataclass(frozen=True)
class ShownRepro:
    """The stored shape of the engine's `Repro`, as far as a page shows it."""

    source: str
    author: str = ""
    url: str = ""

    @classmethod
    def from_dict(cls, data: Json) -> ShownRepro:
        if not isinstance(data.get("source"), str):
            raise ValueError("a repro without source")
        return from_known(cls, data)


@dataclass(frozen=True)
class ShownFailure:
    """What failed: the CI job's failure (`CIJob`) or the run the reproduction shows."""

    exception: str = ""
    message: str = ""
    signature: str = ""

    @classmethod
    def from_dict(cls, data: Json) -> ShownFailure:
        return cls(**{k: str(data[k]) for k in ("exception", "message", "signature") if data.get(k)})


@dataclass(frozen=True)
class ShownBisection:
    """The stored shape of the engine's `BisectResult`: newer runs keep `releases` (untested
    ones too) and `changed_between`; older ones only `probes` and a certain `first_changed`."""

    first_changed: str | None = None
    last_unchanged: str | None = None
    probes: dict[str, bool] = field(default_factory=dict)
    changed_between: list[str] | None = None
    releases: list[Json] = field(default_factory=list)  # label, outcome (None: untested), runs, why

    @classmethod
    def from_dict(cls, data: Json) -> ShownBisection:
        between = data.get("changed_between")
        return cls(data.get("first_changed"), data.get("last_unchanged"),
                   dict(data["probes"]) if isinstance(data.get("probes"), dict) else {},
                   [str(v) for v in between] if isinstance(between, list) and len(between) == 2 else None,
                   [r for r in data.get("releases") or [] if isinstance(r, dict) and r.get("label") is not None])


def _typed(decode: Callable[[Json], T], value: Any) -> T | None:
    """`decode(value)` for a stored mapping; None for anything missing or malformed."""
    if not isinstance(value, dict):
        return None
    try:
        return decode(value)
    except (TypeError, ValueError, KeyError):
        return None


@dataclass(frozen=True)
class RunView:
    """A run's state as a reader outside its pipeline sees it (read only; any kind of run)."""

    reproduction: Reproduction | None = None
    rerun: RerunSummary | None = None
    minimized: Minimized | None = None
    repro: ShownRepro | None = None
    bisect: ShownBisection | None = None
    job: ShownFailure | None = None
    rerun_output: str = ""
    findings: list[Json] = field(default_factory=list)  # the security review's (`Finding.to_dict()`)
    pr_url: str = ""  # the draft PR a CI or fuzz job's publish stage opened

    @classmethod
    def load(cls, state: Mapping[str, Any] | None) -> RunView:
        state = state or {}
        findings = state.get("findings")
        return cls(
            reproduction=_typed(Reproduction.from_dict, state.get("reproduction")),
            rerun=_typed(RerunSummary.from_dict, state.get("rerun")),
            minimized=_typed(Minimized.from_dict, state.get("minimized")),
            repro=_typed(ShownRepro.from_dict, state.get("repro")),
            bisect=_typed(ShownBisection.from_dict, state.get("bisect")),
            job=_typed(ShownFailure.from_dict, state.get("job")),
            rerun_output=str(state.get("rerun_output") or ""),
            findings=[f for f in findings if isinstance(f, dict)] if isinstance(findings, list) else [],
            pr_url=str(state.get("pr_url") or ""),
        )

    @property
    def pull_request(self) -> str | None:
        """The PR's address, when it is a link a page may show (https only)."""
        return self.pr_url if self.pr_url.startswith("https://") else None

    @property
    def shown_run(self) -> Json:
        """The sandboxed run the reproduction shows (`runner.run_once`'s dict), or {}."""
        result = self.reproduction.result if self.reproduction else None
        return result if isinstance(result, dict) else {}
