"""The culprit search's GitHub reads, on the trusted side (the default queue): no build, no run.

`read_range(github, repo, culprit, narrowing)` (a `Narrowing` waiting for `RANGE`): the nightly
builds' `git_version`s are `nightly` branch commits whose subjects name the main-branch commits
they were cut from (`source_commit`); `GET /compare/{a}...{b}` lists the commits between those.
Then, for each commit, `GET /compare/{a}...{commit}` says what changed since the older nightly
(`app.engine.envs.history.classify`), and so how the repro side can build it:

- only Python: the shipped Python files changed (at most `GITHUB_FILE_LIMIT`, what GitHub
  lists), each read at the commit (`GET /contents`, at most 1 MB a file, GitHub's limit), their
  texts kept once per blob in `Narrowing.contents`, at most `MAX_CONTENTS_BYTES` in all: the
  state carries them to the repro side, and every later job of the run carries them too. A
  commit whose overlay needs more is "could not be tested" (it says so), never a boundary;
- compiled sources: their paths, for the operator's build command on the repro side;
- anything else it cannot be built from (off the nightly's line, more files than GitHub lists,
  a read that failed): why, in words.

At most `MAX_COMMITS` commits are prepared (one `compare` each); a longer range stops at the
nightlies and says so. `name_pulls(github, repo, culprit, narrowing)` (waiting for `PULLS`):
the boundary commit's PR, or each candidate's (`GET /commits/{sha}/pulls`, else the message).

What comes from the repro side (the `git_version`s, the commits the probes settled on) is read
as refs only: a hex commit id or nothing, only in `SCRUB_TORCH_REPO`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from app.engine.envs.history import PYTHON_PACKAGES, classify
from app.engine.envs.nightlies import source_of_subject
from app.engine.verdict.culprit import Commit, Culprit, pull_of, pulls_in_message
from app.github.port import GitHubAPIError
from app.pipelines.kit.narrowing import DONE, PROBE, CommitBuild, Narrowing

GITHUB_FILE_LIMIT = 300  # files GitHub's compare lists at most
MAX_COMMITS = 300  # commits a range is prepared for: one compare each (a day of PyTorch is ~50-150)
MAX_CONTENTS_BYTES = 4 << 20  # the overlays' texts a run's state carries to the repro side
SHA = re.compile(r"[0-9a-f]{7,40}")
NOTE_KEEP = 400


class OverBound(RuntimeError):
    """The overlays' texts would pass `MAX_CONTENTS_BYTES`."""


def source_commit(github: Any, repo: str, version: str) -> str:
    """The main-branch commit a build's `git_version` stands for (itself when it is not a
    `nightly` branch commit)."""
    commit = github.get_commit(repo, version)
    subject = str((commit.get("commit") or {}).get("message") or "").split("\n", 1)[0]
    return source_of_subject(subject) or str(commit.get("sha") or version)


def _shipped_python(path: str) -> bool:
    return path.endswith(".py") and path.startswith(PYTHON_PACKAGES)


@dataclass
class Contents:
    """The overlays' texts, read once per blob, within `limit` bytes in all."""

    limit: int = MAX_CONTENTS_BYTES
    texts: dict[str, str] = field(default_factory=dict)
    size: int = 0

    def key(self, github: Any, repo: str, path: str, commit: str, blob: str) -> str | None:
        """The key of `path`'s text at `commit` (None: not there). Raises `OverBound`."""
        key = blob if SHA.fullmatch(blob or "") and blob.strip("0") else f"{path}@{commit}"
        if key in self.texts:
            return key
        text = github.file_at(repo, path, commit)
        if text is None:
            return None
        size = len(text.encode("utf-8"))
        if self.size + size > self.limit:
            raise OverBound(f"its Python overlay needs more than the {self.limit >> 20} MB of changed files a run "
                            "carries to the repro side")
        self.texts[key], self.size = text, self.size + size
        return key


def plan_commit(github: Any, repo: str, base: str, sha: str, title: str, named: list[int],
                contents: Contents) -> CommitBuild:
    """How the repro side can build `sha`, a descendant of `base` (module docstring)."""
    def cannot(why: str) -> CommitBuild:
        return CommitBuild(sha, title, named, cannot=why[:NOTE_KEEP])

    try:
        compared = github.compare_commits(repo, base, sha)
    except GitHubAPIError as exc:
        return cannot(f"what changed since the nightly could not be read: {exc}")
    if compared.get("status") not in ("ahead", "identical"):
        return cannot(f"{sha[:12]} does not descend from the nightly's source {base[:12]}")
    files = list(compared.get("files") or [])
    if len(files) >= GITHUB_FILE_LIMIT:
        return cannot(f"{len(files)}+ files changed since the nightly: GitHub lists at most {GITHUB_FILE_LIMIT}, "
                      "so what changed is not known")
    paths = [str(f.get("filename") or "") for f in files] + [str(f["previous_filename"]) for f in files
                                                             if f.get("previous_filename")]
    compiled = classify(paths).compiled
    if compiled:
        return CommitBuild(sha, title, named, compiled=list(compiled))
    overlay: dict[str, str | None] = {}
    try:
        for entry in files:
            name, previous = str(entry.get("filename") or ""), entry.get("previous_filename")
            if previous and _shipped_python(str(previous)):
                overlay[str(previous)] = None
            if _shipped_python(name):
                overlay[name] = None if entry.get("status") == "removed" else \
                    contents.key(github, repo, name, sha, str(entry.get("sha") or ""))
    except OverBound as exc:
        return cannot(str(exc))
    except GitHubAPIError as exc:
        return cannot(f"a changed file could not be read: {exc}")
    return CommitBuild(sha, title, named, files=overlay)


def _stop(culprit: Culprit, narrowing: Narrowing, repo: str, note: str, **extra: Any) -> tuple[Culprit, Narrowing]:
    return replace(culprit, repo=repo, note=note[:NOTE_KEEP], **extra), narrowing.at(DONE)


def read_range(github: Any, repo: str, culprit: Culprit, narrowing: Narrowing,
               max_commits: int = MAX_COMMITS) -> tuple[Culprit, Narrowing]:
    """The commits between the two nightlies' sources, each with its build (module docstring)."""
    if github is None:
        return _stop(culprit, narrowing, repo, "No GitHub connection to read the commits between the two nightlies.")
    for git in (narrowing.older_git, narrowing.newer_git):
        if not SHA.fullmatch(git):
            return _stop(culprit, narrowing, repo, f"A nightly's git_version ({git[:60]!r}) is not a commit, so "
                                                   "the commits between the two nightlies are not known.")
    try:
        base = source_commit(github, repo, narrowing.older_git)
        head = source_commit(github, repo, narrowing.newer_git)
        compared = github.compare_commits(repo, base, head)
    except (GitHubAPIError, ValueError) as exc:
        return _stop(culprit, narrowing, repo, f"The commits between the two nightlies could not be read: {exc}")
    listed = list(compared.get("commits") or [])
    total = int(compared.get("total_commits") or len(listed))
    if compared.get("status") != "ahead" or not listed or len(listed) < total:
        return _stop(culprit, narrowing, repo, f"The {total} commits between the two nightlies' sources could not "
                     "all be listed in order, so single commits were not tried.", commits_in_range=total)
    if total > max_commits:
        return _stop(culprit, narrowing, repo, f"The {total} commits between the two nightlies' sources are more "
                     f"than Scrubbot prepares builds for ({max_commits}), so single commits were not tried.",
                     commits_in_range=total)
    contents = Contents()
    planned = []
    for entry in listed:
        sha, message = str(entry["sha"]), str((entry.get("commit") or {}).get("message") or "")
        planned.append(plan_commit(github, repo, base, sha, message.split("\n", 1)[0],
                                   pulls_in_message(message, repo), contents))
    return replace(culprit, repo=repo), replace(narrowing, step=PROBE, base=base, commits=planned,
                                                contents=contents.texts, total=total)


def name_pulls(github: Any, repo: str, culprit: Culprit, narrowing: Narrowing) -> tuple[Culprit, Narrowing]:
    """The boundary commit's PR, or each candidate's: the merged one GitHub associates with it,
    else the one its message names (already there from the probes), else none."""
    named = {c.sha: c.named for c in narrowing.commits}

    def pull(commit: Commit) -> Commit:
        if github is None or not SHA.fullmatch(commit.sha):
            return commit
        try:
            associated = github.commit_pulls(repo, commit.sha)
        except GitHubAPIError:  # the message's PR stands
            associated = []
        return replace(commit, pull=pull_of(commit.sha, associated, named.get(commit.sha, [])))

    found = replace(culprit, repo=repo, commit=pull(culprit.commit) if culprit.commit else None,
                    candidates=[pull(c) for c in culprit.candidates])
    return found, narrowing.at(DONE)


def range_summary(narrowing: Narrowing) -> str:
    """`12 commits between the nightlies' sources: 10 with a Python build, 1 with compiled sources, 1 not`."""
    builds = narrowing.commits
    python = sum(1 for c in builds if not c.cannot and not c.compiled)
    compiled = sum(1 for c in builds if c.compiled)
    cannot = len(builds) - python - compiled
    return (f"{narrowing.total} commits between {narrowing.older.label} and {narrowing.newer.label}'s sources: "
            f"{python} with a Python build, {compiled} needing a compiled build, {cannot} that cannot be built "
            f"({sum(len(t.encode('utf-8')) for t in narrowing.contents.values()) >> 10} KiB of changed files)")


__all__ = ["GITHUB_FILE_LIMIT", "MAX_COMMITS", "MAX_CONTENTS_BYTES", "Contents", "name_pulls", "plan_commit",
           "range_summary", "read_range", "source_commit"]
