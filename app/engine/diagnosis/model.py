"""The plain data of a diagnosis: what is varied, what a run showed, what an experiment found.

- `Subject`: the repro that reproduced (its source, the failure, how often it failed, where).
- `Variant`: one changed copy of it (a source transform, maybe environment variables).
- `Observation`: one sandboxed run of a variant, judged by the caller ("the same failure?").
- `Experiment`: which variants to run and how to read their runs into one line of fact.
- `Finding`: that line, with the runs behind it (stored, reported, printed by `--json`).
- `DiagnosisReport`: the patterns that matched, their hints, the findings and the next step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

Json = dict[str, Any]
RAN, NOT_RUN = "ran", "not run"


@dataclass(frozen=True)
class Subject:
    """A repro that reproduced: what the experiments vary and compare with."""

    source: str  # the script (or the test file) whose copies are run
    failure: str  # the failure as observed: "RuntimeError: ...", "killed by SIGSEGV", "prints nan"
    output: str = ""  # the failing run's output (its tail)
    outcome: str = "error"  # error | crash | timeout | passed (a wrong value, judged by its output)
    runs: int = 1
    failures: int = 1
    gpu: bool = False  # the worker has a GPU
    timeout_s: float = 60.0  # the repro's timeout
    hash_seed_fixed: bool = False  # every run already had PYTHONHASHSEED pinned

    @property
    def flaky(self) -> bool:
        return 0 < self.failures < self.runs

    @property
    def rate(self) -> float:
        return self.failures / self.runs if self.runs else 1.0

    @property
    def text(self) -> str:
        """Everything the patterns read: the failure, then the output."""
        return f"{self.failure}\n{self.output}"


@dataclass(frozen=True)
class Variant:
    """One changed copy of the repro. `env` is set when the interpreter starts (a cold run)."""

    label: str  # what changed, for the report: "backend='aot_eager'"
    source: str
    env: Mapping[str, str] = field(default_factory=dict)
    runs: int = 1
    line_shift: int = 0  # lines a prologue added before the repro's own (`with_prologue`)


@dataclass(frozen=True)
class Observation:
    """One run of a variant; `same`: it failed the way the repro fails (the caller's judge)."""

    outcome: str  # passed | error | crash | timeout
    same: bool
    description: str  # "RuntimeError: boom", "passed", "killed by SIGSEGV", "timed out after 30 s"
    output: str = ""
    seconds: float = 0.0


Runs = list[tuple[Variant, list[Observation]]]


@dataclass(frozen=True)
class Experiment:
    """A follow-up run the diagnosis calls for.

    `variants(subject)` gives the copies to run ([] when there is nothing to vary: no
    `torch.compile`, no DataLoader); they run in order, and with `stop` the rest are left once
    `stop(observations)` holds for one (a ladder stops at the first layer that fails the same
    way). `conclude(subject, runs)` reads the runs into one sentence of fact.
    """

    name: str
    family: str  # compile | cuda | nan | dataloader | nondeterminism | oom
    question: str  # what it asks, for the docs and the "not run" lines
    variants: Callable[[Subject], list[Variant]]
    conclude: Callable[[Subject, Runs], str]
    budget_s: float = 120.0
    needs_gpu: bool = False
    stop: Callable[[list[Observation]], bool] | None = None


@dataclass(frozen=True)
class Finding:
    """What one experiment showed (or why it did not run)."""

    experiment: str
    family: str
    status: str  # RAN | NOT_RUN
    line: str  # the fact, one sentence
    variants: list[Json] = field(default_factory=list)  # label, runs, same, outcome
    seconds: float = 0.0

    def to_dict(self) -> Json:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Json) -> Finding:
        return cls(**{k: data[k] for k in ("experiment", "family", "status", "line", "variants", "seconds")
                      if k in data})


@dataclass(frozen=True)
class DiagnosisReport:
    """The patterns that matched the failure, what they say to try, and what the experiments showed."""

    patterns: list[str] = field(default_factory=list)  # catalog names, most specific first
    hints: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    next_step: str = ""
    seconds: float = 0.0

    @property
    def pattern(self) -> str:
        return self.patterns[0] if self.patterns else ""

    @property
    def ran(self) -> list[Finding]:
        return [f for f in self.findings if f.status == RAN]

    def to_dict(self) -> Json:
        return {"patterns": list(self.patterns), "hints": list(self.hints),
                "findings": [f.to_dict() for f in self.findings], "next_step": self.next_step,
                "seconds": self.seconds}

    @classmethod
    def from_dict(cls, data: Json) -> DiagnosisReport:
        return cls(patterns=list(data.get("patterns") or []), hints=list(data.get("hints") or []),
                   findings=[Finding.from_dict(f) for f in data.get("findings") or []],
                   next_step=data.get("next_step") or "", seconds=float(data.get("seconds") or 0.0))


def tally(observations: list[Observation]) -> tuple[int, int]:
    """(runs that failed the same way, runs)."""
    return sum(o.same for o in observations), len(observations)


def first_other(observations: list[Observation]) -> Observation | None:
    """The first run that did something else than pass or fail the same way."""
    return next((o for o in observations if not o.same and o.outcome != "passed"), None)


def three_ways(observations: list[Observation], same: str, other: Callable[[Observation], str], passed: str) -> str:
    """A variant's runs read the usual way: `same` when one failed the same way, else `other` of
    the first that failed otherwise, else `passed`."""
    if tally(observations)[0]:
        return same
    found = first_other(observations)
    return other(found) if found else passed


def summary(variant: Variant, observations: list[Observation]) -> Json:
    same, runs = tally(observations)
    other = first_other(observations)
    return {"label": variant.label, "runs": runs, "same": same,
            "passed": sum(o.outcome == "passed" for o in observations),
            "other": other.description if other else None,
            "seconds": round(sum(o.seconds for o in observations), 3)}
