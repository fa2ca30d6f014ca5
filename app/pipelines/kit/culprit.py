"""Narrow a change between two builds over nightlies and commits: the repro side's probes.

The search runs in steps on both sides of the trust split (`app.pipelines.kit.narrowing` says
which does what); this module is the repro side's, and asks GitHub for nothing.

`nightly_step(ctx, search, older, newer)`: `older` and `newer` are the two builds a release
bisection (or a progression re-check) left around the change, each with its outcome. The daily
nightlies of `SCRUB_TORCH_NIGHTLY_INDEX_URL` whose version lies between the two builds'
(`app.engine.envs.nightlies.between`) are bisected with the two ends known; each probed nightly
is installed once (`kit.builds.nightly_env`); one that cannot be installed is "could not be
tested", as is one that shows another outcome. Two adjacent nightlies around the change leave
their `git_version`s for the trusted side, which reads the commits between them
(`kit.commit_range`).

`commit_step(ctx, search, culprit, narrowing)`: the commits the trusted side listed, bisected
the same way over the builds it said can be made (`kit.builds.commit_env`: the older nightly
plus the commit's Python, or the operator's build command); a commit that cannot be built is
"could not be tested". The trusted side then names the boundary commit's PR.

Every probe is sized to the failure rate measured now (`search.plan`), as the release
bisection's are. It stops where the evidence stops, and says why (`Culprit.note`). Pure
orchestration: the runs are `kit.probes`, the searches `app.engine.verdict.bisect`.
"""

from __future__ import annotations

import time
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from app.engine.envs.index import IndexUnavailable, torch_wheels
from app.engine.envs.nightlies import Nightly, between, daily
from app.engine.envs.provision import ProvisionError
from app.engine.verdict import bisect as bisection
from app.engine.verdict.bisect_probe import UNKNOWN, ProbeAnswer, ProbePlan
from app.engine.verdict.culprit import COMMIT, NIGHTLY, RELEASE, Commit, Culprit, Level, direction_of
from app.pipelines.base import RunContext
from app.pipelines.kit import builds
from app.pipelines.kit.narrowing import PULLS, RANGE, Narrowing
from app.pipelines.kit.probes import probe_on

K = 2  # probes per round, run in parallel
WHY_KEEP = 200
UNTESTABLE = (ProvisionError, IndexUnavailable, builds.CannotBuild, OSError, ValueError, zipfile.BadZipFile)
# The note of a culprit whose commit range the trusted side has not read yet: it stays if the
# search stops there (a later step failed), and is replaced by the step that goes on.
PENDING = "The commits between the two nightlies were not searched."


@dataclass(frozen=True)
class Point:
    """A build at one end of the range: its label, torch version, outcome, and (when known) its
    interpreter or its nightly."""

    label: str
    version: str
    reproduces: bool
    python: str = ""
    nightly: Nightly | None = None


@dataclass(frozen=True)
class Search:
    """What a probe runs and how: the repro, the reported failure, the sized plan."""

    source: str
    reported: dict | None
    plan: ProbePlan
    expected_exception: str | None = None


def _untested(exc: BaseException, what: str) -> ProbeAnswer:
    """Could not be tested: `what` and the line that says why (an installer's last `ERROR:` line)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()] or [type(exc).__name__]
    errors = [line for line in lines if line.startswith("ERROR")]
    return ProbeAnswer(UNKNOWN, 0, f"{what}: {' '.join((errors or lines)[-1 if errors else 0].split())}"[:WHY_KEEP])


class _Searcher:
    def __init__(self, ctx: RunContext, search: Search, older_reproduces: bool, levels: list[Level] | None = None):
        self.ctx, self.search, self.older_reproduces = ctx, search, older_reproduces
        self.settings = ctx.settings
        self.repo = str(getattr(self.settings, "torch_repo", "") or "pytorch/pytorch")
        self.envs: dict[str, Path] = {}  # nightly label -> its environment
        self.levels: list[Level] = list(levels or [])

    # -- probes -------------------------------------------------------------------------------
    def probe(self, python: str, label: str) -> ProbeAnswer:
        s = self.search
        return probe_on(self.settings, python, s.source, s.reported, s.plan, label=label,
                        expected_exception=s.expected_exception)

    def nightly_env(self, nightly: Nightly) -> Path:
        if nightly.label not in self.envs:
            self.envs[nightly.label] = builds.nightly_env(self.settings, nightly)
        return self.envs[nightly.label]

    def bisect(self, level: str, labels: list[str], known: dict[str, bool], probe: Callable[[str], ProbeAnswer],
               names: dict[str, str] | None = None) -> Level:
        started = time.monotonic()

        def round_done(state: bisection.BisectState) -> None:
            tried = ", ".join(f"{(names or {}).get(label, label)}={'bug' if hit else 'ok'}"
                              for label, hit in state.probes.items() if label not in known)
            self.ctx.log(f"culprit, {level} builds: {tried or 'nothing tested yet'}")

        with ThreadPoolExecutor(max_workers=K) as pool:
            found = bisection.bisect(labels, probe, k=K, known=known,
                                     run_all=lambda p, batch: list(pool.map(p, batch)), on_round=round_done)
        done = Level(level, found, dict(names or {}), time.monotonic() - started)
        self.levels.append(done)
        return done

    # -- levels -------------------------------------------------------------------------------
    def culprit(self, level: str, before: str, after: str, certain: bool, **extra: Any) -> Culprit:
        return Culprit(direction_of(self.older_reproduces), level, before, after, certain, self.repo,
                       levels=list(self.levels), **extra)

    def run(self, older: Point, newer: Point) -> tuple[Culprit, Narrowing | None]:
        index = self.settings.torch_nightly_index_url
        if not index:
            return self.culprit(RELEASE, older.label, newer.label, True,
                                note="No nightly index is configured (SCRUB_TORCH_NIGHTLY_INDEX_URL), so the "
                                     "range stays between these two builds."), None
        try:
            nightlies = between(daily(torch_wheels(index), gpu=bool(self.settings.gpu)), older.version, newer.version)
        except IndexUnavailable as exc:
            return self.culprit(RELEASE, older.label, newer.label, True,
                                note=f"The nightly index could not be read: {exc}"), None
        if not nightlies:
            return self.culprit(RELEASE, older.label, newer.label, True,
                                note=f"No nightly on the index lies between {older.label} and {newer.label}."), None
        return self.nightly_level(nightlies, older, newer)

    def nightly_level(self, nightlies: list[Nightly], older: Point, newer: Point) -> tuple[Culprit, Narrowing | None]:
        by_label = {n.label: n for n in nightlies}
        for end in (older, newer):
            if end.nightly is not None:
                by_label[end.label] = end.nightly

        def probe(label: str) -> ProbeAnswer:
            try:
                env = self.nightly_env(by_label[label])
            except UNTESTABLE as exc:
                return _untested(exc, "could not be installed")
            return self.probe(builds.python_of(env), label)

        labels = [older.label, *[n.label for n in nightlies], newer.label]
        level = self.bisect(NIGHTLY, labels, {older.label: older.reproduces, newer.label: newer.reproduces}, probe)
        found = level.result
        if not found.changed_between:
            return self.culprit(RELEASE, older.label, newer.label, True,
                                note="No nightly could be tested, so the range stays between these two builds."), None
        before, after = found.changed_between
        if before not in by_label or after not in by_label:
            return self.culprit(NIGHTLY, before, after, found.certain, untested=list(found.untested),
                                note="The change is between a release and a nightly: a release is built from its "
                                     "own branch, so no commit range on main joins them."), None
        # Untested nightlies between the two are holes in the commit range too, not a stop.
        first, second = by_label[before], by_label[after]
        pending = self.culprit(NIGHTLY, first.label, second.label, found.certain, untested=list(found.untested),
                               note=PENDING)
        try:
            sources = [builds.git_version(self.nightly_env(n)) for n in (first, second)]
        except UNTESTABLE as exc:
            return replace(pending, note=f"The nightlies' sources could not be read: {exc}"[:400]), None
        if not all(sources):
            return replace(pending, note="A nightly names no git_version, so the commits between the two "
                                         "nightlies are not known."), None
        return pending, Narrowing(RANGE, first, second, str(sources[0]), str(sources[1]),
                                  found.probes[first.label])

    def commit_level(self, narrowing: Narrowing, culprit: Culprit) -> Culprit:
        first, second, listed = narrowing.older, narrowing.newer, narrowing.commits
        source_a, total = narrowing.base, narrowing.total
        try:
            env_a = self.nightly_env(first)
        except UNTESTABLE as exc:
            return replace(culprit, note=f"The older nightly could not be installed again: {exc}"[:400])
        shas = [c.sha for c in listed]
        by_sha = {c.sha: c for c in listed}
        names = {source_a: f"{source_a[:12]} ({first.label})"} | \
            {c.sha: c.sha[:12] + (f" (#{c.pull})" if c.pull else "") for c in listed}
        names[shas[-1]] += f" ({second.label})"

        def probe(sha: str) -> ProbeAnswer:
            try:
                env = builds.commit_env(self.settings, env_a, source_a, by_sha[sha], narrowing.contents)
            except UNTESTABLE as exc:
                return _untested(exc, "could not be built")
            return self.probe(builds.python_of(env), names.get(sha, sha[:12]))

        known = {source_a: narrowing.older_reproduces, shas[-1]: not narrowing.older_reproduces}
        found = self.bisect(COMMIT, [source_a, *shas], known, probe, names).result
        if found.certain:
            sha = found.first_changed or ""
            build = by_sha[sha]
            return self.culprit(COMMIT, sha[:12], sha[:12], True, commit=Commit(sha, build.title, build.pull),
                                commits_in_range=total)
        low, high = found.changed_between or [source_a, shas[-1]]
        span = shas[(shas.index(low) + 1) if low in shas else 0:shas.index(high) + 1]
        candidates = [Commit(sha, by_sha[sha].title, by_sha[sha].pull) for sha in span]
        return self.culprit(COMMIT, low[:12], high[:12], False, candidates=candidates, commits_in_range=total,
                            untested=[names.get(u, u[:12]) for u in found.untested],
                            note="Some commits in the range could not be built or tested.")


def nightly_step(ctx: RunContext, search: Search, older: Point, newer: Point) -> tuple[Culprit, Narrowing | None]:
    """The change between `older` and `newer` narrowed to nightlies; with the narrowing the
    trusted side goes on from when two adjacent nightlies bound it (module docstring)."""
    if older.reproduces == newer.reproduces:
        raise ValueError("the two builds behave the same: there is no change between them to look for")
    return _Searcher(ctx, search, older.reproduces).run(older, newer)


def commit_step(ctx: RunContext, search: Search, culprit: Culprit, narrowing: Narrowing) -> tuple[Culprit, Narrowing]:
    """The commits the trusted side read, bisected over the builds it said can be made."""
    if not narrowing.commits or not narrowing.base:
        return replace(culprit, note="No commit between the two nightlies to try."), narrowing.at(PULLS)
    searcher = _Searcher(ctx, search, narrowing.older_reproduces, culprit.levels)
    return searcher.commit_level(narrowing, culprit), narrowing.at(PULLS)


__all__ = ["PENDING", "Point", "Search", "commit_step", "nightly_step"]
