"""Narrow a change between two builds to nightlies, then to commits, and name the PR.

`find_culprit(ctx, search, older, newer)`: `older` and `newer` are the two builds a release
bisection (or a progression re-check) left around the change, each with its outcome. Then:

1. **nightlies**: the daily nightlies of `SCRUB_TORCH_NIGHTLY_INDEX_URL` whose version lies
   between the two builds' (`app.engine.envs.nightlies.between`), bisected with the two ends
   known; each probed nightly is installed once (`kit.builds.nightly_env`); one that cannot be
   installed is "could not be tested", as is one that shows another outcome;
2. **commits**: when two adjacent nightlies bound the change, the main-branch commits between
   their sources (`GET /compare`, in `SCRUB_TORCH_REPO`), bisected the same way over the builds
   that can be made (`kit.builds.commit_env`: the older nightly plus the commit's Python, or
   the operator's build command); a commit that cannot be built is "could not be tested";
3. **the PR**: the boundary commit's PR (`GET /commits/{sha}/pulls`, else its message).

Every probe is sized to the failure rate measured now (`search.plan`), as the release
bisection's are. It stops where the evidence stops, and says why (`Culprit.note`). Pure
orchestration: the runs are `kit.probes`, the searches `app.engine.verdict.bisect`.
"""

from __future__ import annotations

import time
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.engine.envs.index import IndexUnavailable, torch_wheels
from app.engine.envs.nightlies import Nightly, between, daily
from app.engine.envs.provision import ProvisionError
from app.engine.verdict import bisect as bisection
from app.engine.verdict.bisect_probe import UNKNOWN, ProbeAnswer, ProbePlan
from app.engine.verdict.culprit import (
    COMMIT, NIGHTLY, RELEASE, Commit, Culprit, Level, direction_of, pull_of_commit, pulls_in_message,
)
from app.github.port import GitHubAPIError
from app.pipelines.base import RunContext
from app.pipelines.kit import builds
from app.pipelines.kit.probes import probe_on

K = 2  # probes per round, run in parallel
WHY_KEEP = 200
UNTESTABLE = (ProvisionError, IndexUnavailable, builds.CannotBuild, GitHubAPIError, OSError, ValueError,
              zipfile.BadZipFile)


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
    def __init__(self, ctx: RunContext, search: Search, older: Point, newer: Point):
        self.ctx, self.search, self.older, self.newer = ctx, search, older, newer
        self.settings = ctx.settings
        self.repo = str(getattr(self.settings, "torch_repo", "") or "pytorch/pytorch")
        self.envs: dict[str, Path] = {}  # nightly label -> its environment
        self.levels: list[Level] = []

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
        return Culprit(direction_of(self.older.reproduces), level, before, after, certain, self.repo,
                       levels=list(self.levels), **extra)

    def run(self) -> Culprit:
        older, newer = self.older, self.newer
        index = self.settings.torch_nightly_index_url
        if not index:
            return self.culprit(RELEASE, older.label, newer.label, True,
                                note="No nightly index is configured (SCRUB_TORCH_NIGHTLY_INDEX_URL), so the "
                                     "range stays between these two builds.")
        try:
            nightlies = between(daily(torch_wheels(index), gpu=bool(self.settings.gpu)), older.version, newer.version)
        except IndexUnavailable as exc:
            return self.culprit(RELEASE, older.label, newer.label, True, note=f"The nightly index could not be read: {exc}")
        if not nightlies:
            return self.culprit(RELEASE, older.label, newer.label, True,
                                note=f"No nightly on the index lies between {older.label} and {newer.label}.")
        return self.nightly_level(nightlies)

    def nightly_level(self, nightlies: list[Nightly]) -> Culprit:
        older, newer = self.older, self.newer
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
                                note="No nightly could be tested, so the range stays between these two builds.")
        before, after = found.changed_between
        if before not in by_label or after not in by_label:
            return self.culprit(NIGHTLY, before, after, found.certain, untested=list(found.untested),
                                note="The change is between a release and a nightly: a release is built from its "
                                     "own branch, so no commit range on main joins them.")
        # Untested nightlies between the two are holes in the commit range too, not a stop.
        return self.commit_level(by_label[before], by_label[after], found)

    def commit_level(self, first: Nightly, second: Nightly, nightlies: bisection.BisectResult) -> Culprit:
        github, outcomes = self.ctx.github, nightlies.probes

        def stop(note: str, **extra: Any) -> Culprit:
            return self.culprit(NIGHTLY, first.label, second.label, nightlies.certain,
                                untested=list(nightlies.untested), note=note, **extra)

        if github is None or not hasattr(github, "compare_commits"):
            return stop("No GitHub connection to read the commits between the two nightlies.")
        try:
            env_a, env_b = self.nightly_env(first), self.nightly_env(second)
            source_a = builds.source_commit(github, self.repo, builds.git_version(env_a) or "")
            source_b = builds.source_commit(github, self.repo, builds.git_version(env_b) or "")
            compared = github.compare_commits(self.repo, source_a, source_b)
        except UNTESTABLE as exc:
            return stop(f"The commits between the two nightlies could not be read: {exc}"[:400])
        listed = [Commit(str(c["sha"]), str((c.get("commit") or {}).get("message") or "").split("\n", 1)[0],
                         (pulls_in_message(str((c.get("commit") or {}).get("message") or ""), self.repo) or [None])[0])
                  for c in compared.get("commits") or []]
        total = int(compared.get("total_commits") or len(listed))
        if compared.get("status") != "ahead" or not listed or len(listed) < total:
            return stop(f"The {total} commits between the two nightlies' sources could not all be listed in "
                        "order, so single commits were not tried.", commits_in_range=total)
        messages = {str(c["sha"]): str((c.get("commit") or {}).get("message") or "")
                    for c in compared.get("commits") or []}
        shas = [c.sha for c in listed]
        names = {source_a: f"{source_a[:12]} ({first.label})"} | \
            {c.sha: c.sha[:12] + (f" (#{c.pull})" if c.pull else "") for c in listed}
        names[shas[-1]] += f" ({second.label})"

        def probe(sha: str) -> ProbeAnswer:
            try:
                env = builds.commit_env(self.settings, github, self.repo, env_a, source_a, sha)
            except UNTESTABLE as exc:
                return _untested(exc, "could not be built")
            return self.probe(builds.python_of(env), names.get(sha, sha[:12]))

        known = {source_a: outcomes[first.label], shas[-1]: outcomes[second.label]}
        found = self.bisect(COMMIT, [source_a, *shas], known, probe, names).result
        if found.certain:
            sha = found.first_changed or ""
            title = next(c.title for c in listed if c.sha == sha)
            pull = self.pull(sha, messages.get(sha, ""))
            return self.culprit(COMMIT, sha[:12], sha[:12], True, commit=Commit(sha, title, pull),
                                commits_in_range=total)
        low, high = found.changed_between or [source_a, shas[-1]]
        span = shas[(shas.index(low) + 1) if low in shas else 0:shas.index(high) + 1]
        candidates = [Commit(sha, next(c.title for c in listed if c.sha == sha), self.pull(sha, messages[sha]))
                      for sha in span]
        return self.culprit(COMMIT, low[:12], high[:12], False, candidates=candidates, commits_in_range=total,
                            untested=[names.get(u, u[:12]) for u in found.untested],
                            note="Some commits in the range could not be built or tested.")

    def pull(self, sha: str, message: str) -> int | None:
        try:
            associated = self.ctx.github.commit_pulls(self.repo, sha)
        except GitHubAPIError as exc:
            if exc.transient:
                raise
            associated = []
        return pull_of_commit(sha, associated, message, self.repo)


def find_culprit(ctx: RunContext, search: Search, older: Point, newer: Point) -> Culprit:
    """The change between `older` and `newer` narrowed as far as builds allow (module docstring)."""
    if older.reproduces == newer.reproduces:
        raise ValueError("the two builds behave the same: there is no change between them to look for")
    return _Searcher(ctx, search, older, newer).run()


__all__ = ["Point", "Search", "find_culprit"]
