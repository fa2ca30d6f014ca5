"""K-ary search over an ordered list of environments (seed `001` step 5a).

Given environments oldest -> newest and a probe `(label) -> bool` ("does it reproduce
there?"), find the first environment whose outcome differs from the oldest one's. Each round
probes `k` evenly spaced environments of the open range at once (k=2 splits it into thirds,
as the seed suggests), so a run with `k` parallel workers needs about log_{k+1}(n) rounds.

The search is plain state in, state out: `BisectState` is JSON-ready, `next_probes` says what
to run, `advance` folds the results in. A retried task resumes from its saved state instead of
probing again. `bisect(...)` drives the loop, with a `run_all` hook to run a round in parallel.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable

Probe = Callable[[str], bool]
# Runs one round: (probe, labels) -> outcomes in the same order. Default: one after another.
RunAll = Callable[[Probe, list[str]], list[bool]]


@dataclass
class BisectState:
    labels: list[str]
    lo: int = 0  # index whose outcome is known to be the oldest one's
    hi: int = -1  # index known to differ; -1 while the newest end is unknown
    probes: dict[str, bool] = field(default_factory=dict)

    def outcome(self, index: int) -> bool | None:
        return self.probes.get(self.labels[index])

    @property
    def finished(self) -> bool:
        ends_known = self.outcome(0) is not None and self.outcome(-1) is not None
        return ends_known and (self.outcome(0) == self.outcome(-1) or self.hi - self.lo <= 1)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BisectState:
        return cls(list(data["labels"]), data["lo"], data["hi"], dict(data["probes"]))


@dataclass(frozen=True)
class BisectResult:
    first_changed: str | None  # the first environment whose outcome differs from the oldest's
    last_unchanged: str | None  # the environment just before it
    oldest_outcome: bool | None
    probes: dict[str, bool]  # every probe made, oldest -> newest
    rounds: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BisectResult:
        return cls(data["first_changed"], data["last_unchanged"], data["oldest_outcome"],
                   dict(data["probes"]), data["rounds"])


def start(labels: list[str], known: dict[str, bool] | None = None) -> BisectState:
    """A fresh search; `known` outcomes (e.g. the newest, just run by the reproduce stage) are kept."""
    if len(labels) < 2:
        raise ValueError("bisection needs at least two environments")
    if len(set(labels)) != len(labels):
        raise ValueError(f"environment labels repeat: {labels}")
    state = BisectState(list(labels), probes={k: v for k, v in (known or {}).items() if k in labels})
    state.hi = len(labels) - 1
    return advance(state, {})


def next_probes(state: BisectState, k: int = 2) -> list[str]:
    """The environments to probe next: the unknown ends first, else k evenly spaced inside (lo, hi)."""
    if k < 1:
        raise ValueError("k must be at least 1")
    ends = [state.labels[i] for i in (0, -1) if state.outcome(i) is None]
    if ends:
        return ends
    if state.finished:
        return []
    span = state.hi - state.lo
    inside = sorted({state.lo + round((i + 1) * span / (k + 1)) for i in range(k)} - {state.lo, state.hi})
    return [state.labels[i] for i in inside]


def advance(state: BisectState, results: dict[str, bool]) -> BisectState:
    """Fold a round's outcomes in and narrow (lo, hi) to the first change seen. Returns a new state."""
    probes = {**state.probes, **results}
    new = BisectState(state.labels, state.lo, state.hi, {label: probes[label] for label in state.labels if label in probes})
    oldest = new.outcome(0)
    if oldest is None or new.outcome(-1) is None:
        return new
    for index in range(new.lo + 1, new.hi):
        seen = new.outcome(index)
        if seen is None:
            continue
        if seen == oldest:
            new.lo = index
        else:
            new.hi = index
            break
    return new


def result(state: BisectState, rounds: int = 0) -> BisectResult:
    oldest = state.outcome(0)
    changed = oldest is not None and state.outcome(-1) is not None and state.outcome(-1) != oldest
    return BisectResult(
        first_changed=state.labels[state.hi] if changed else None,
        last_unchanged=state.labels[state.lo] if changed else None,
        oldest_outcome=oldest,
        probes=dict(state.probes),
        rounds=rounds,
    )


def _sequential(probe: Probe, labels: list[str]) -> list[bool]:
    return [probe(label) for label in labels]


def bisect(
    labels: list[str],
    probe: Probe,
    *,
    k: int = 2,
    known: dict[str, bool] | None = None,
    state: BisectState | None = None,
    run_all: RunAll = _sequential,
    on_round: Callable[[BisectState], None] | None = None,
) -> BisectResult:
    """Search `labels` (oldest -> newest) for the first environment where the outcome changes.

    Resumes from `state` when given; `on_round` sees the state after each round (save it to
    resume a retried task). Assumes one change point; with several, it finds one of them.
    """
    state = state or start(labels, known)
    rounds = 0
    while not state.finished:
        batch = next_probes(state, k)
        state = advance(state, dict(zip(batch, run_all(probe, batch))))
        rounds += 1
        if on_round:
            on_round(state)
    return result(state, rounds)


def describe_change(found: BisectResult, fails: Callable[[str], bool | None] = lambda label: None) -> str:
    """One line for people: `fixed in 2.14.1 (still fails in 2.13.0)`, `regressed in X (passes in W)`,
    else `changed in X (W before it)`, or `no change`. `fails(label)` says whether a probed
    environment failed; None when unknown (then the oldest outcome decides nothing)."""
    if not found.first_changed:
        return "no change across the environments"
    before, after = fails(found.last_unchanged or ""), fails(found.first_changed)
    if before is True and after is False:
        return f"fixed in {found.first_changed} (still fails in {found.last_unchanged})"
    if before is False and after is True:
        return f"regressed in {found.first_changed} (passes in {found.last_unchanged})"
    return f"changed in {found.first_changed} (after {found.last_unchanged})"
