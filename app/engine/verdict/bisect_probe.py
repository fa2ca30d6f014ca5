"""What one environment says in a bisection: `reproduces`, `absent` or `unknown`.

One clean run says little about a flaky bug: a bug failing in 30% of runs passes a single run
70% of the time, and the bisection would put the boundary next to a release where the bug
still lives (a wrong "fixed in X"). So a probe repeats clean runs until they would have shown
the bug with 95% odds, and says `unknown` when a run shows something else:

- a run that reproduces settles `reproduces` at once (a reproducing run is proof);
- a run that neither reproduces nor passes cleanly (another error, a timeout, a missing
  package, no GPU) settles `unknown` at once: the bug may be hidden behind it, and that
  error usually repeats (a timeout has already cost the whole timeout);
- `ProbePlan.clean_runs` clean runs in a row settle `absent`.

How many clean runs (`ProbePlan.for_reproduction`): n = ceil(ln(1 - confidence) / ln(1 - p)),
the runs after which a bug failing with probability p shows at least once with `confidence`,
capped at `max_runs`. The rate p is what the reproduce stage measured now:

- every run reproduced and enough of them to call it deterministic: p = 1, one run;
- flaky: the LOW end of the rate's 95% Wilson interval, the lowest rate the runs are
  compatible with (the point estimate would size the probe for a rate the bug may not have);
- it passes now (nothing measured about the bug): `unknown_rate`, the rarest failure rate the
  "fixed" verdict itself is sized to catch, so `absent` on an old release means what
  `fixed` means on the newest one, as far as the cap allows.

The cap bounds the cost (a clean run costs a whole run); `detectable_rate` says the rate the
runs actually made was sized for (10 runs: 26% or more with 95% odds), and reports say it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from app.engine.verdict.classify import FIXED, INCONCLUSIVE, describe
from app.engine.verdict.classify import REPRODUCES as REPRODUCES_VERDICT
from app.engine.verdict.flaky import wilson_interval

REPRODUCES, ABSENT, UNKNOWN = "reproduces", "absent", "unknown"
CONFIDENCE = 0.95
MAX_RUNS = 10  # 0.05 ** (1 / 10) -> a failure rate of 26% or more shows with 95% odds
WHY_KEEP = 200  # characters of what an `unknown` run did, kept in the record


@dataclass(frozen=True)
class ProbeAnswer:
    outcome: str  # REPRODUCES, ABSENT or UNKNOWN
    runs: int  # runs it took (0: known from elsewhere, e.g. the reproduce stage)
    why: str = ""  # for UNKNOWN: what the run did instead ("timed out after 60 s")

    @property
    def reproduces(self) -> bool | None:
        """True, False, or None when the environment could not be tested."""
        return None if self.outcome == UNKNOWN else self.outcome == REPRODUCES

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of(cls, value: ProbeAnswer | bool, runs: int = 1) -> ProbeAnswer:
        """An answer, or a plain "reproduces there?" bool read as a settled answer."""
        if isinstance(value, ProbeAnswer):
            return value
        return cls(REPRODUCES if value else ABSENT, runs)


@dataclass(frozen=True)
class ProbePlan:
    clean_runs: int  # clean runs in a row that make an environment `absent`
    design_rate: float  # the failure rate they are sized to catch with `confidence`
    confidence: float = CONFIDENCE

    @property
    def detectable_rate(self) -> float:
        """The lowest failure rate `clean_runs` clean runs rule out with `confidence` odds."""
        return 1.0 - (1.0 - self.confidence) ** (1.0 / self.clean_runs)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"detectable_rate": round(self.detectable_rate, 4)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProbePlan:
        """Back from `to_dict()` (its `detectable_rate` is derived, so it is not read)."""
        return cls(int(data["clean_runs"]), float(data["design_rate"]), float(data.get("confidence", CONFIDENCE)))

    @classmethod
    def for_rate(cls, rate: float, *, confidence: float = CONFIDENCE, max_runs: int = MAX_RUNS) -> ProbePlan:
        if not 0 < confidence < 1 or max_runs < 1:
            raise ValueError("confidence must be in (0, 1) and max_runs at least 1")
        rate = min(1.0, max(0.0, rate))
        if rate >= 1.0:
            return cls(1, 1.0, confidence)
        needed = math.ceil(math.log(1 - confidence) / math.log(1 - rate)) if rate > 0 else max_runs
        return cls(max(1, min(max_runs, needed)), round(rate, 4), confidence)

    @classmethod
    def for_reproduction(cls, reproduction: Mapping[str, Any] | None, *, deterministic_after: int,
                         unknown_rate: float, confidence: float = CONFIDENCE,
                         max_runs: int = MAX_RUNS) -> ProbePlan:
        """The plan for the rate the reproduce stage measured (`runs`, `reproduced`, `interval`).

        `deterministic_after`: reproducing runs in a row that the stop rule calls deterministic;
        fewer (a hang that timed out once) count as flaky. `unknown_rate`: the rate assumed when
        nothing reproduced (the bug is gone now, so its rate was never measured)."""
        data = reproduction or {}
        runs, hits = int(data.get("runs") or 0), int(data.get("reproduced") or 0)
        if hits == 0 or runs == 0:
            return cls.for_rate(unknown_rate, confidence=confidence, max_runs=max_runs)
        if hits == runs and runs >= deterministic_after:
            return cls.for_rate(1.0, confidence=confidence, max_runs=max_runs)
        return cls.for_rate(_interval_low(data.get("interval"), hits, runs), confidence=confidence, max_runs=max_runs)


def _interval_low(stored: Any, hits: int, runs: int) -> float:
    if isinstance(stored, (list, tuple)) and len(stored) == 2 and isinstance(stored[0], (int, float)):
        return float(stored[0])
    return wilson_interval(hits, runs)[0]


def read_run(verdict: str, run: Mapping[str, Any]) -> str:
    """One run, classified against the reported error -> REPRODUCES, ABSENT (a clean pass) or UNKNOWN.

    A clean pass is `fixed`, or a passing run with no reported error (`inconclusive` for the
    reproduce stage, but here the question is only whether the reference failure shows)."""
    if verdict == REPRODUCES_VERDICT:
        return REPRODUCES
    if verdict == FIXED or (verdict == INCONCLUSIVE and run.get("outcome") == "passed"):
        return ABSENT
    return UNKNOWN


def probe(run: Callable[[], tuple[str, Mapping[str, Any]]], plan: ProbePlan) -> ProbeAnswer:
    """Run `run()` (-> its verdict and the run dict) until the answer is settled (module docstring)."""
    for done in range(1, plan.clean_runs + 1):
        verdict, seen = run()
        reading = read_run(verdict, seen)
        if reading == REPRODUCES:
            return ProbeAnswer(REPRODUCES, done)
        if reading == UNKNOWN:
            return ProbeAnswer(UNKNOWN, done, " ".join(describe(dict(seen)).split())[:WHY_KEEP])
    return ProbeAnswer(ABSENT, plan.clean_runs)
