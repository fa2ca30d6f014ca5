"""K-ary search over an ordered list of environments (seed `001` step 5a).

Given environments oldest -> newest and a probe `(label) -> answer` ("does it reproduce
there?"), find the first environment whose outcome differs from the oldest tested one's. Each
round probes `k` evenly spaced environments of the open range at once (k=2 splits it into
thirds, as the seed suggests), so a run with `k` parallel workers needs about log_{k+1}(n) rounds.

An answer is a bool or a `ProbeAnswer` (`app.engine.verdict.bisect_probe`), which may be
`unknown`: the environment could not be tested (another error, a timeout, a missing package).
An unknown environment is a hole, never evidence either way:

- an unknown end is replaced by the next environment inward: the reference outcome is the
  oldest tested environment's, the other end the newest tested one's;
- inside the open range, each probe point moves to the nearest environment not tried yet;
- when only unknown environments are left between the last unchanged and the first changed
  environment, the change is somewhere in that range: the result says `changed_between` and
  `untested`, and leaves `first_changed`/`last_unchanged` empty, as they name a boundary
  that is certain (adjacent tested environments).

The search is plain state in, state out: `BisectState` is JSON-ready, `next_probes` says what
to run, `advance` folds the results in. A retried task resumes from its saved state instead of
probing again. `bisect(...)` drives the loop, with a `run_all` hook to run a round in parallel.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from app.engine.verdict.bisect_probe import ProbeAnswer

Answer = ProbeAnswer | bool
Probe = Callable[[str], Answer]
# Runs one round: (probe, labels) -> answers in the same order. Default: one after another.
RunAll = Callable[[Probe, list[str]], list[Answer]]


@dataclass
class BisectState:
    labels: list[str]
    lo: int = 0  # index whose outcome is known to be the reference (oldest tested) one's
    hi: int = -1  # index known to differ; -1 while the newest end is unknown
    probes: dict[str, bool] = field(default_factory=dict)  # tested environments' outcomes
    unknown: dict[str, str] = field(default_factory=dict)  # could not be tested: why
    runs: dict[str, int] = field(default_factory=dict)  # runs each probe took

    def outcome(self, index: int) -> bool | None:
        return self.probes.get(self.labels[index])

    def tried(self, index: int) -> bool:
        return self.labels[index] in self.probes or self.labels[index] in self.unknown

    def _scan(self, indices: Iterable[int]) -> tuple[int, bool] | None:
        """The first of `indices` not known to be untestable: (index, whether it was tested)."""
        for index in indices:
            if self.outcome(index) is not None or not self.tried(index):
                return index, self.outcome(index) is not None
        return None

    def _ends(self) -> tuple[tuple[int, bool] | None, tuple[int, bool] | None]:
        return self._scan(range(len(self.labels))), self._scan(range(len(self.labels) - 1, -1, -1))

    def pending_ends(self) -> list[int]:
        """The ends (oldest and newest environments that may be testable) not tried yet."""
        return sorted({end[0] for end in self._ends() if end is not None and not end[1]})

    def known_ends(self) -> tuple[int, int] | None:
        """The oldest and newest tested environments, once both ends are settled; None while
        one is pending or when nothing could be tested."""
        low, high = self._ends()
        if low is None or high is None or not (low[1] and high[1]):
            return None
        return low[0], high[0]

    @property
    def finished(self) -> bool:
        return not next_probes(self, 1)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BisectState:
        return cls(list(data["labels"]), data["lo"], data["hi"], dict(data["probes"]),
                   dict(data.get("unknown") or {}), dict(data.get("runs") or {}))


@dataclass(frozen=True)
class BisectResult:
    first_changed: str | None  # the first environment whose outcome differs, when certain
    last_unchanged: str | None  # the tested environment just before it
    oldest_outcome: bool | None  # the oldest tested environment's outcome (the reference)
    probes: dict[str, bool]  # every tested environment's outcome, oldest -> newest
    rounds: int
    # The tested environments around the change, certain or not; `untested`: the environments
    # between them that could not be tested (empty when the boundary is certain).
    changed_between: list[str] | None = None
    untested: list[str] = field(default_factory=list)
    # Every environment tried, oldest -> newest: label, outcome (None: could not be tested),
    # runs (0: known before the search) and, when untested, why.
    releases: list[dict[str, Any]] = field(default_factory=list)

    @property
    def certain(self) -> bool:
        return self.first_changed is not None

    def to_dict(self) -> dict[str, Any]:
        """JSON; the range and release fields only when set (results stored before they existed
        keep their shape)."""
        data = asdict(self)
        for name, empty in (("changed_between", None), ("untested", []), ("releases", [])):
            if data[name] == empty:
                del data[name]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BisectResult:
        between = data.get("changed_between")
        return cls(data["first_changed"], data["last_unchanged"], data["oldest_outcome"],
                   dict(data["probes"]), data["rounds"], list(between) if between else None,
                   list(data.get("untested") or []), list(data.get("releases") or []))


def start(labels: list[str], known: Mapping[str, Answer] | None = None) -> BisectState:
    """A fresh search; `known` outcomes (e.g. the newest, just run by the reproduce stage) are kept."""
    if len(labels) < 2:
        raise ValueError("bisection needs at least two environments")
    if len(set(labels)) != len(labels):
        raise ValueError(f"environment labels repeat: {labels}")
    state = BisectState(list(labels))
    state.hi = len(labels) - 1
    return advance(state, {k: ProbeAnswer.of(v, runs=0) for k, v in (known or {}).items() if k in labels})


def next_probes(state: BisectState, k: int = 2) -> list[str]:
    """The environments to probe next: the untried ends first, else k evenly spaced inside
    (lo, hi), each moved to the nearest environment not tried yet."""
    if k < 1:
        raise ValueError("k must be at least 1")
    pending = state.pending_ends()
    if pending:
        return [state.labels[i] for i in pending]
    ends = state.known_ends()
    if ends is None or state.outcome(ends[0]) == state.outcome(ends[1]):
        return []
    free = [i for i in range(state.lo + 1, state.hi) if not state.tried(i)]
    span, chosen = state.hi - state.lo, []
    for target in (state.lo + round((i + 1) * span / (k + 1)) for i in range(k)):
        left = [i for i in free if i not in chosen]
        if not left:
            break
        chosen.append(min(left, key=lambda i: (abs(i - target), i)))
    return [state.labels[i] for i in sorted(chosen)]


def advance(state: BisectState, results: Mapping[str, Answer]) -> BisectState:
    """Fold a round's answers in and narrow (lo, hi) to the first change seen. Returns a new state."""
    probes, unknown, runs = dict(state.probes), dict(state.unknown), dict(state.runs)
    for label, value in results.items():
        answer = ProbeAnswer.of(value)
        if answer.reproduces is None:
            unknown[label] = answer.why
        else:
            probes[label] = answer.reproduces
        runs[label] = answer.runs
    def in_order(values: dict[str, Any]) -> dict[str, Any]:
        return {label: values[label] for label in state.labels if label in values}

    new = BisectState(state.labels, state.lo, state.hi, in_order(probes), in_order(unknown), in_order(runs))
    ends = new.known_ends()
    if ends is None:
        return new
    new.lo = max(new.lo, ends[0])
    new.hi = ends[1] if new.hi < 0 else min(new.hi, ends[1])
    reference = new.outcome(new.lo)
    for index in range(new.lo + 1, new.hi):
        seen = new.outcome(index)
        if seen is None:
            continue
        if seen == reference:
            new.lo = index
        else:
            new.hi = index
            break
    return new


def result(state: BisectState, rounds: int = 0) -> BisectResult:
    ends = state.known_ends()
    oldest = state.outcome(ends[0]) if ends else None
    changed = ends is not None and state.outcome(ends[1]) != oldest
    untested = [state.labels[i] for i in range(state.lo + 1, state.hi)] if changed else []
    certain = changed and not untested
    releases = [{"label": label, "outcome": state.probes.get(label), "runs": state.runs.get(label, 1)}
                | ({"why": state.unknown[label]} if label in state.unknown else {})
                for label in state.labels if label in state.probes or label in state.unknown]
    return BisectResult(
        first_changed=state.labels[state.hi] if certain else None,
        last_unchanged=state.labels[state.lo] if certain else None,
        oldest_outcome=oldest,
        probes=dict(state.probes),
        rounds=rounds,
        changed_between=[state.labels[state.lo], state.labels[state.hi]] if changed else None,
        untested=untested,
        releases=releases,
    )


def _sequential(probe: Probe, labels: list[str]) -> list[Answer]:
    return [probe(label) for label in labels]


def bisect(
    labels: list[str],
    probe: Probe,
    *,
    k: int = 2,
    known: Mapping[str, Answer] | None = None,
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
    while batch := next_probes(state, k):
        state = advance(state, dict(zip(batch, run_all(probe, batch))))
        rounds += 1
        if on_round:
            on_round(state)
    return result(state, rounds)


def describe_change(found: BisectResult, fails: Callable[[str], bool | None] = lambda label: None) -> str:
    """One line for people: `fixed in 2.14.1 (still fails in 2.13.0)`, `regressed in X (passes in W)`,
    else `changed in X (W before it)`; `fixed between W and X; V could not be tested` when
    environments between them could not be tested; or `no change across W..X`. `fails(label)`
    says whether a tested environment failed; None when unknown (then nothing is called a fix)."""
    unknown = [r["label"] for r in found.releases if r.get("outcome") is None]
    if found.changed_between and not found.first_changed:
        before, after = found.changed_between
        verb = _direction(fails(before), fails(after)) or "changed"
        return f"{verb} between {before} and {after}; {', '.join(found.untested)} could not be tested"
    note = f"; {', '.join(unknown)} could not be tested" if unknown else ""
    if not found.first_changed:
        tested = [r["label"] for r in found.releases if r.get("outcome") is not None] or list(found.probes)
        if unknown and len(tested) < 2:
            return f"only {tested[0]} could be tested{note}" if tested else f"no environment could be tested{note}"
        span = f"{tested[0]}..{tested[-1]}" if len(tested) > 1 else "the environments"
        return f"no change across {span}{note}"
    direction = _direction(fails(found.last_unchanged or ""), fails(found.first_changed))
    if direction == "fixed":
        return f"fixed in {found.first_changed} (still fails in {found.last_unchanged}){note}"
    if direction == "regressed":
        return f"regressed in {found.first_changed} (passes in {found.last_unchanged}){note}"
    return f"changed in {found.first_changed} (after {found.last_unchanged}){note}"


def _direction(before: bool | None, after: bool | None) -> str | None:
    if before is True and after is False:
        return "fixed"
    if before is False and after is True:
        return "regressed"
    return None
