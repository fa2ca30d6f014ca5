"""A culprit search between its steps: what one side of the trust split leaves the other.

Naming the PR that changed an outcome takes four steps on two kinds of worker
(`docs/security.md`, "The trust split"): the repro side probes builds and holds no GitHub
credential; the trusted side reads GitHub and runs nothing. A `Narrowing` is the state they
pass through the run's state (`narrowing`), next to the best answer so far (`culprit`):

1. `nightly` (repro): the nightlies between the two builds are bisected; two adjacent ones
   around the change leave their `git_version`s (read from the installed builds) -> `RANGE`;
2. `RANGE` (trusted): the main-branch commits those nightlies were cut from, the commits between
   them, and for each commit how it can be built: the shipped Python files changed since the
   older nightly with their text (`contents`, bounded), or the compiled sources that need the
   operator's build command, or why it cannot be built -> `PROBE`;
3. `PROBE` (repro): the commits are bisected over those builds -> `PULLS`;
4. `PULLS` (trusted): the boundary commit (or the candidates) mapped to its PR -> `DONE`.

A step that cannot go on says why in the culprit's note and sets `DONE`. Plain data, JSON both
ways; `contents` is dropped once the probes are done (it is only the overlays' input).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from app.engine.envs.nightlies import Nightly

RANGE, PROBE, PULLS, DONE = "range", "probe", "pulls", "done"
STEPS = (RANGE, PROBE, PULLS, DONE)


@dataclass(frozen=True)
class CommitBuild:
    """How one commit of the range is built, as the trusted side read it from GitHub.

    `files`: the shipped Python files changed since the older nightly's source, path -> key of
    its text in `Narrowing.contents` (None: deleted there); `compiled`: the compiled sources
    changed (a build needs the operator's build command, which the repro host has or not);
    `cannot`: why no build of it can be made at all ("" when one can)."""

    sha: str
    title: str
    named: list[int] = field(default_factory=list)  # the PRs its message names (merge bot, squash title)
    files: dict[str, str | None] = field(default_factory=dict)
    compiled: list[str] = field(default_factory=list)
    cannot: str = ""

    @property
    def pull(self) -> int | None:
        return self.named[0] if self.named else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CommitBuild:
        return cls(str(data["sha"]), str(data.get("title") or ""), [int(n) for n in data.get("named") or []],
                   {str(k): (None if v is None else str(v)) for k, v in (data.get("files") or {}).items()},
                   [str(p) for p in data.get("compiled") or []], str(data.get("cannot") or ""))


@dataclass(frozen=True)
class Narrowing:
    """The two adjacent nightlies around the change, and what the steps after them found."""

    step: str  # the step it waits for: RANGE, PROBE, PULLS or DONE
    older: Nightly  # the last nightly that behaves as the older build
    newer: Nightly  # the first that behaves as the newer build
    older_git: str  # their `torch.version.git_version`s, as installed
    newer_git: str
    older_reproduces: bool
    base: str = ""  # RANGE: the main-branch commit the older nightly was cut from
    commits: list[CommitBuild] = field(default_factory=list)  # RANGE: base..newer's source, oldest first
    contents: dict[str, str] = field(default_factory=dict)  # RANGE: the overlays' texts by key
    total: int = 0  # commits in the range (GitHub's count)

    def at(self, step: str) -> Narrowing:
        if step not in STEPS:
            raise ValueError(f"no culprit step {step!r}")
        return replace(self, step=step, contents={} if step in (PULLS, DONE) else self.contents)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["older"], data["newer"] = self.older.to_dict(), self.newer.to_dict()
        data["commits"] = [c.to_dict() for c in self.commits]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Narrowing:
        step = str(data["step"])
        if step not in STEPS:
            raise ValueError(f"no culprit step {step!r}")
        return cls(step, Nightly.from_dict(data["older"]), Nightly.from_dict(data["newer"]), str(data["older_git"]),
                   str(data["newer_git"]), bool(data["older_reproduces"]), str(data.get("base") or ""),
                   [CommitBuild.from_dict(c) for c in data.get("commits") or []],
                   {str(k): str(v) for k, v in (data.get("contents") or {}).items()}, int(data.get("total") or 0))


def waits_for(narrowing: Narrowing | None, step: str) -> bool:
    return narrowing is not None and narrowing.step == step


__all__ = ["DONE", "PROBE", "PULLS", "RANGE", "CommitBuild", "Narrowing", "waits_for"]
