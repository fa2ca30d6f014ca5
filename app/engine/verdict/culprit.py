"""The change that broke or fixed it, as people name it: the PR, and the builds around it.

A release bisection ends between two releases ("fixed in 2.14.0, still fails in 2.13.0"). The
range is then narrowed level by level (the pipeline's `app.pipelines.kit.culprit` runs the
probes): over the nightlies between them (one build a day), then, where single commits can be
built, over the commits between the two nightlies' sources. Each level is a bisection of its
own (`app.engine.verdict.bisect`, `BisectResult`): a build that could not be tested (another
error, an install failure, a commit that needs a compiled build nobody can make) is a hole,
never a boundary, so a level may end in a range rather than a pair.

`Culprit` is what came out, plain data: the finest level reached, the two builds around the
change, the boundary commit and its PR when the commit level was certain, otherwise the
commits (and their PRs) the change is among. `describe` words it for the issue comment:

    regressed in #1234 (nightly 2026-03-04 passes, 2026-03-05 fails)
    fixed by #1234 (nightly 2026-03-04 fails, 2026-03-05 passes)

A commit's PR: the merged pull request GitHub associates with it (`commits/{sha}/pulls`, the
one whose merge commit it is), else the one its message names. PyTorch lands PRs with a bot
that writes `Pull Request resolved: https://github.com/pytorch/pytorch/pull/N` into the
message and ` (#N)` after the title, and closes the PR unmerged, so the message is often the
only link (`pulls_in_message`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from app.engine.verdict.bisect import BisectResult

RELEASE, NIGHTLY, COMMIT = "release", "nightly", "commit"
CANDIDATES_SHOWN = 8  # commits listed when the change could not be narrowed to one

_RESOLVED = re.compile(r"Pull Request resolved: https?://github\.com/([\w.-]+/[\w.-]+)/pull/(\d+)", re.I)
_TITLE_NUMBER = re.compile(r"\(#(\d+)\)\s*$")


def pulls_in_message(message: str, repo: str) -> list[int]:
    """PR numbers the commit message says it landed: `Pull Request resolved: .../<repo>/pull/N`
    lines first, else a title ending in `(#N)` (GitHub's squash merge, PyTorch's merge bot)."""
    found = [int(n) for r, n in _RESOLVED.findall(message or "") if r.lower() == repo.lower()]
    if found:
        return list(dict.fromkeys(found))
    title = (message or "").split("\n", 1)[0]
    match = _TITLE_NUMBER.search(title)
    return [int(match.group(1))] if match else []


def pull_of_commit(sha: str, associated: list[Mapping[str, Any]], message: str, repo: str) -> int | None:
    """The PR that landed `sha`: the associated merged PR whose merge commit it is, else the one
    its message names, else any associated merged PR; None when nothing links it to one."""
    return pull_of(sha, associated, pulls_in_message(message, repo))


def pull_of(sha: str, associated: list[Mapping[str, Any]], named: list[int]) -> int | None:
    """`pull_of_commit` with the PRs the message names already read (`pulls_in_message`)."""
    merged = [p for p in associated if p.get("merged_at") and isinstance(p.get("number"), int)]
    for pull in merged:
        if pull.get("merge_commit_sha") == sha:
            return int(pull["number"])
    if named:
        return named[0]
    return int(merged[0]["number"]) if merged else None


@dataclass(frozen=True)
class Commit:
    sha: str
    title: str
    pull: int | None = None  # the PR that landed it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Commit:
        return cls(str(data["sha"]), str(data.get("title") or ""), data.get("pull"))


@dataclass(frozen=True)
class Level:
    """One level's search: what it was over, what it found, and what it cost."""

    level: str  # release, nightly, commit
    result: BisectResult
    names: dict[str, str] = field(default_factory=dict)  # label -> how people name it (a short sha)
    wall_s: float = 0.0

    @property
    def probes(self) -> int:
        """Runs the level made (builds known before it count 0)."""
        return sum(int(r.get("runs") or 0) for r in self.result.releases)

    def name(self, label: str) -> str:
        return self.names.get(label, label)

    def to_dict(self) -> dict[str, Any]:
        return {"level": self.level, "result": self.result.to_dict(), "names": dict(self.names),
                "wall_s": round(self.wall_s, 3), "probes": self.probes}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Level:
        return cls(str(data["level"]), BisectResult.from_dict(dict(data["result"])), dict(data.get("names") or {}),
                   float(data.get("wall_s") or 0.0))


@dataclass(frozen=True)
class Culprit:
    """What narrowing found. `before`/`after`: the builds around the change at the finest level
    reached (the last that behaves as the old one, the first that behaves as the new one);
    `certain`: adjacent, tested; `commit`: the boundary commit when the commit level is certain;
    `candidates`: the commits the change is among otherwise (when the range is known)."""

    direction: str  # fixed, regressed
    level: str  # the finest level reached: release, nightly, commit
    before: str
    after: str
    certain: bool
    repo: str  # the repository the commits and PRs belong to
    untested: list[str] = field(default_factory=list)  # builds between before and after not testable
    commit: Commit | None = None
    candidates: list[Commit] = field(default_factory=list)
    commits_in_range: int = 0  # commits between the two nightlies (0: not known)
    note: str = ""  # why it stopped where it did
    levels: list[Level] = field(default_factory=list)

    @property
    def pull(self) -> int | None:
        return self.commit.pull if self.commit else None

    @property
    def probes(self) -> int:
        return sum(level.probes for level in self.levels)

    @property
    def wall_s(self) -> float:
        return sum(level.wall_s for level in self.levels)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["commit"] = self.commit.to_dict() if self.commit else None
        data["candidates"] = [c.to_dict() for c in self.candidates]
        data["levels"] = [level.to_dict() for level in self.levels]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Culprit:
        return cls(
            direction=str(data["direction"]), level=str(data["level"]), before=str(data["before"]),
            after=str(data["after"]), certain=bool(data["certain"]), repo=str(data.get("repo") or ""),
            untested=list(data.get("untested") or []),
            commit=Commit.from_dict(data["commit"]) if data.get("commit") else None,
            candidates=[Commit.from_dict(c) for c in data.get("candidates") or []],
            commits_in_range=int(data.get("commits_in_range") or 0), note=str(data.get("note") or ""),
            levels=[Level.from_dict(level) for level in data.get("levels") or []],
        )


def direction_of(older_fails: bool) -> str:
    return "fixed" if older_fails else "regressed"


def ref(number: int, repo: str, here: str) -> str:
    """`#N` on the repository the comment is on, `owner/name#N` elsewhere (GitHub links both)."""
    return f"#{number}" if repo.lower() == here.lower() else f"{repo}#{number}"


def _pair(direction: str, before: str, after: str, untested: list[str]) -> str:
    """`nightly 2026-03-04 passes, 2026-03-05 fails` (the prefix said once when both share it)."""
    old, new = ("fails", "passes") if direction == "fixed" else ("passes", "fails")
    both = before.startswith("nightly ") and after.startswith("nightly ")
    short = (lambda label: label.removeprefix("nightly ")) if both else (lambda label: label)
    text = f"{before} {old}, {short(after)} {new}"
    if untested:
        text += f"; {', '.join(short(u) for u in untested)} could not be tested"
    return text


def _level(culprit: Culprit, name: str) -> Level | None:
    return next((level for level in culprit.levels if level.level == name), None)


def nightly_pair(culprit: Culprit) -> str | None:
    """The builds around the change at the nightly level, in people's words; None without one."""
    nightly = _level(culprit, NIGHTLY)
    if nightly is None:
        return None
    result = nightly.result
    if result.certain:
        before, after, untested = result.last_unchanged, result.first_changed, []
    elif result.changed_between:
        (before, after), untested = result.changed_between, list(result.untested)
    else:
        return None
    return _pair(culprit.direction, nightly.name(before or ""), nightly.name(after or ""),
                 [nightly.name(u) for u in untested])


def describe(culprit: Culprit, here: str) -> str:
    """One line for the comment (see the module docstring); `here`: the issue's repository."""
    fixed = culprit.direction == "fixed"
    around = nightly_pair(culprit)
    if around is None:
        return (f"{'fixed' if fixed else 'regressed'} between {culprit.before} and {culprit.after}"
                + (f"; {', '.join(culprit.untested)} could not be tested" if culprit.untested else ""))
    verb = "fixed by" if fixed else "regressed in"
    commit = culprit.commit
    if commit is not None and culprit.certain:
        who = ref(commit.pull, culprit.repo, here) if commit.pull else f"commit {commit.sha[:12]}"
        return f"{verb} {who} ({around})"
    shown = [c for c in culprit.candidates if c.pull][:CANDIDATES_SHOWN]
    if shown:
        more = len(culprit.candidates) - len(shown)
        who = "one of " + ", ".join(ref(c.pull, culprit.repo, here) for c in shown if c.pull)
        who += f" and {more} more commits" if more > 0 else ""
        return f"{verb} {who} ({around})"
    if culprit.commits_in_range:
        return f"{verb} one of {culprit.commits_in_range} commits ({around})"
    return f"{'fixed' if fixed else 'regressed'} ({around})"


def evidence(culprit: Culprit) -> list[str]:
    """The probes, level by level: one line per build tried, for the report and the comment."""
    lines = []
    for level in culprit.levels:
        lines.append(f"{level.level.capitalize()} builds ({level.probes} runs, {level.wall_s:.0f} s):")
        for tried in level.result.releases:
            outcome = tried.get("outcome")
            said = ("reproduces" if outcome else "passes") if outcome is not None else \
                f"could not be tested ({tried.get('why') or 'another outcome'})"
            runs = int(tried.get("runs") or 0)
            count = f" ({runs} run{'s' if runs != 1 else ''})" if runs else " (known)" if outcome is not None else ""
            lines.append(f"- {level.name(str(tried.get('label')))}: {said}{count}")
    if culprit.note:
        lines.append(culprit.note)
    return lines


__all__ = ["COMMIT", "CANDIDATES_SHOWN", "Commit", "Culprit", "Level", "NIGHTLY", "RELEASE", "describe",
           "direction_of", "evidence", "nightly_pair", "pull_of", "pull_of_commit", "pulls_in_message", "ref"]
