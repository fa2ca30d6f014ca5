"""Git plumbing for CI jobs: cached bare mirrors, worktrees, authors, commits and pushes.

One bare mirror per repository lives under a cache dir and is updated with `git fetch`;
each job gets a `git worktree` at the failing commit, so a second job on the same repo costs
a fetch, not a clone. The mirror is a partial clone (`--filter=blob:none`): every commit and
tree, but a file's contents only once a worktree needs them (pytorch/pytorch's history is ~4 GB,
nearly all of it old blobs; its commits and trees are what finding a build's nearest nightly
needs). Git fetches a worktree's missing blobs from `origin` in one batch; `worktree(...,
remote=URL)` hands it the URL (with its token) for that on the command line only. Submodules
are checked out only when asked (`submodules=True`, an operator's setting: their URLs come from
the untrusted tree, so only https remotes are allowed). Remotes may be `file://` URLs, local paths or https URLs carrying a
token (`https://x-access-token:TOKEN@github.com/o/r.git`). The token is never written to disk
(fetches and pushes name the URL on the command line; the mirror's stored remote is the
redacted URL) and never appears in an error: every message goes through `redact`.

CODEOWNERS parsing lives in `app.engine.git.codeowners`.
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from app.engine.git.tree import Checkout, write_text

SCRUBBOT_NAME = "Scrubbot"
SCRUBBOT_EMAIL = "scrubbot@users.noreply.github.com"
GIT_TIMEOUT_S = 600.0

_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][\w+.-]*://)[^/@\s]+@")


class GitError(RuntimeError):
    """A git command failed; the message is already redacted."""


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Hide URL credentials (`https://user:token@host` -> `https://***@host`) and `secrets`."""
    out = _USERINFO.sub(r"\g<scheme>***@", text)
    for secret in secrets:
        if secret:
            out = out.replace(secret, "***")
    return out


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "SCRUB_"))}
    env.update(
        GIT_TERMINAL_PROMPT="0",  # a bad token fails instead of waiting for a password
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME=SCRUBBOT_NAME,
        GIT_AUTHOR_EMAIL=SCRUBBOT_EMAIL,
        GIT_COMMITTER_NAME=SCRUBBOT_NAME,
        GIT_COMMITTER_EMAIL=SCRUBBOT_EMAIL,
    )
    return env


def git(*args: str, cwd: Path | None = None, timeout: float = GIT_TIMEOUT_S, check: bool = True,
        config: dict[str, str] | None = None) -> str:
    """Run `git args...` and return stdout; raise `GitError` (redacted) when it fails.
    `config`: `-c name=value` settings for this command only (and the git it starts)."""
    options = [item for name, value in (config or {}).items() for item in ("-c", f"{name}={value}")]
    try:
        proc = subprocess.run(
            ["git", *options, *args], cwd=cwd, env=_git_env(), capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        raise GitError(redact(f"git {' '.join(args[:2])} timed out after {timeout:.0f}s")) from None
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip()[-2000:]
        raise GitError(redact(f"git {' '.join(args)} failed ({proc.returncode}): {detail}"))
    return proc.stdout


def remote_url(remote: str | Path) -> str:
    """A git-usable URL for a remote: absolute paths become `file://` URLs, URLs are kept."""
    text = str(remote)
    if "://" in text:
        return text
    return Path(text).resolve().as_uri()


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` (workers on one host share the mirror cache)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


_SHA = re.compile(r"[0-9a-fA-F]{7,64}")


def _require_sha(commit: str) -> None:
    """Commits come from payloads: a hex object name, never an option (`--upload-pack=...`)."""
    if not _SHA.fullmatch(commit):
        raise GitError(f"not a commit id: {commit[:80]!r}")


_FETCH_REFSPECS = ("+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")


@dataclass(frozen=True)
class MirrorCache:
    """Bare mirrors under `root`, one per repository key (`owner/name`)."""

    root: Path

    def path_for(self, key: str) -> Path:
        safe = re.sub(r"[^\w.-]+", "__", key.strip("/")) or "repo"
        return self.root / f"{safe}.git"

    def sync(self, key: str, remote: str | Path, commit: str | None = None) -> Path:
        """Create or update the mirror of `remote`; make sure `commit` (if given) is present."""
        url = remote_url(remote)
        if commit:
            _require_sha(commit)
        mirror = self.path_for(key)
        with _locked(mirror.with_suffix(".lock")):
            if not (mirror / "HEAD").exists():
                git("init", "--bare", "--quiet", str(mirror))
            _make_partial(mirror, redact(url))
            fetch = ("fetch", "--quiet", "--filter=blob:none")
            git(*fetch, "--prune", "--force", "origin", *_FETCH_REFSPECS, cwd=mirror, config=_origin(url))
            if commit and not has_commit(mirror, commit):
                # A commit that no branch points at any more (a force-pushed PR head).
                git(*fetch, "origin", commit, cwd=mirror, check=False, config=_origin(url))
                if not has_commit(mirror, commit):
                    raise GitError(f"commit {commit} not found in {redact(url)}")
        return mirror

    def worktree(self, key: str, commit: str, dest: Path, *, remote: str | Path | None = None,
                 submodules: bool = False) -> Path:
        """A detached worktree of the mirror at `commit` in `dest`; reused if already there.
        `remote`: where missing blobs come from (default: the mirror's stored, redacted origin)."""
        _require_sha(commit)
        mirror = self.path_for(key)
        stored = git("config", "--get", "scrub.origin", cwd=mirror, check=False).strip()
        config = _origin(remote_url(remote) if remote else stored) if (remote or stored) else {}
        with _locked(mirror.with_suffix(".lock")):
            git("worktree", "prune", cwd=mirror)
            if (dest / ".git").exists():
                head = git("rev-parse", "HEAD", cwd=dest).strip()
                wanted = git("rev-parse", f"{commit}^{{commit}}", cwd=mirror).strip()
                if head == wanted:
                    git("reset", "--hard", "--quiet", cwd=dest, config=config)
                    git("clean", "-fdxq", cwd=dest)
                    return dest
                git("worktree", "remove", "--force", str(dest), cwd=mirror)
            dest.parent.mkdir(parents=True, exist_ok=True)
            git("worktree", "add", "--detach", "--force", str(dest), commit, cwd=mirror, config=config)
            if submodules and Checkout(dest).is_file(".gitmodules"):  # never through a link
                git("submodule", "update", "--init", "--recursive", "--depth", "1", cwd=dest,
                    config={**config, "protocol.allow": "never", "protocol.https.allow": "always"})
        return dest


    def remove_worktree(self, key: str, dest: Path) -> None:
        """Drop a job's worktree (its commits stay in the mirror until gc)."""
        mirror = self.path_for(key)
        if not (mirror / "HEAD").exists():
            return
        with _locked(mirror.with_suffix(".lock")):
            if dest.exists():
                git("worktree", "remove", "--force", str(dest), cwd=mirror, check=False)
            git("worktree", "prune", cwd=mirror, check=False)


def _origin(url: str) -> dict[str, str]:
    """`-c` settings that point `origin` at `url` for one command (the token never hits disk)."""
    return {"remote.origin.url": url, "uploadpack.allowFilter": "true"}


def _make_partial(mirror: Path, shown_url: str) -> None:
    """Mark `origin` as the promisor of a blobless partial clone (idempotent). Its URL is never
    stored (every command names it with `-c`); `scrub.origin` keeps the redacted one for people,
    and for lazy fetches of a remote that needs no token."""
    git("config", "--unset-all", "remote.origin.url", cwd=mirror, check=False)
    for name, value in (("core.repositoryformatversion", "1"), ("extensions.partialClone", "origin"),
                        ("remote.origin.promisor", "true"), ("remote.origin.partialclonefilter", "blob:none"),
                        ("scrub.origin", shown_url)):
        git("config", name, value, cwd=mirror)


def has_commit(repo: Path, commit: str) -> bool:
    """Whether `commit` names a commit object present in `repo`."""
    proc = subprocess.run(
        ["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=repo, env=_git_env(), capture_output=True
    )
    return proc.returncode == 0


def is_ancestor(repo: Path, ancestor: str, commit: str) -> bool:
    """Whether `ancestor` is `commit` or one of its ancestors (both present in `repo`)."""
    proc = subprocess.run(["git", "merge-base", "--is-ancestor", ancestor, commit], cwd=repo, env=_git_env(),
                          capture_output=True)
    return proc.returncode == 0


OWN_BRANCHES = ("scrub/",)  # what Scrubbot pushes itself: never evidence that a commit is upstream


def upstream_branch_containing(repo: Path, commit: str, prefer: tuple[str, ...] = ()) -> str | None:
    """A branch of `repo` (a mirror of the upstream repository) that contains `commit`, or None.

    Only `refs/heads/` counts, and not Scrubbot's own `scrub/` branches: a fork's pull request
    head (`refs/pull/N/head`) or a tag (PyTorch's `ciflow/` tags point at fork commits) is on
    no branch. `prefer`: branches asked first with `merge-base --is-ancestor` (the default
    branch: one ancestry walk instead of a scan of every branch)."""
    _require_sha(commit)
    for name in prefer:
        if name and not name.startswith(OWN_BRANCHES) and has_commit(repo, f"refs/heads/{name}") \
                and is_ancestor(repo, commit, f"refs/heads/{name}"):
            return name
    out = git("for-each-ref", f"--contains={commit}", "--format=%(refname)", "refs/heads/", cwd=repo, check=False)
    for ref in out.split():
        name = ref.removeprefix("refs/heads/")
        if not name.startswith(OWN_BRANCHES):
            return name
    return None


def head_commit(worktree: Path) -> str:
    return git("rev-parse", "HEAD", cwd=worktree).strip()


def last_authors(worktree: Path, path: str, limit: int = 5, scan: int = 50) -> list[str]:
    """The most recent distinct authors of `path` (`Name <email>`), newest first."""
    out = git("log", f"-n{scan}", "--format=%an <%ae>", "HEAD", "--", path, cwd=worktree, check=False)
    authors: list[str] = []
    for line in out.splitlines():
        if line and line not in authors and SCRUBBOT_EMAIL not in line:
            authors.append(line)
    return authors[:limit]


@dataclass(frozen=True)
class Pushed:
    branch: str
    commit: str
    updated: bool  # False when the remote branch already held this exact change


def commit_files(worktree: Path, files: dict[str, str], message: str) -> str:
    """Write `files` (repo-relative path -> text) and commit them on the detached HEAD."""
    for rel, text in files.items():
        write_text(worktree, rel, text)  # a link at `rel` is replaced, never written through
    git("add", "--", *files, cwd=worktree)
    author = f"{SCRUBBOT_NAME} <{SCRUBBOT_EMAIL}>"
    git("commit", "--quiet", "--no-verify", f"--author={author}", "-m", message, cwd=worktree)
    return head_commit(worktree)


def remote_branch_tip(remote: str | Path, branch: str) -> str | None:
    out = git("ls-remote", remote_url(remote), f"refs/heads/{branch}")
    return out.split()[0] if out.strip() else None


def push_branch(worktree: Path, remote: str | Path, branch: str) -> Pushed:
    """Push HEAD to `branch` with force-with-lease: a retry replaces the branch it made.

    The lease is the tip observed just before the push, so a concurrent update in between is
    refused rather than overwritten. If the remote tip already has the same tree and parents
    as HEAD (a retry of the same change), nothing is pushed.
    """
    url = remote_url(remote)
    head = head_commit(worktree)
    tip = remote_branch_tip(url, branch)
    if tip and _same_change(worktree, url, tip, head):
        return Pushed(branch, tip, updated=False)
    lease = f"--force-with-lease=refs/heads/{branch}:{tip or ''}"
    git("push", "--quiet", lease, url, f"HEAD:refs/heads/{branch}", cwd=worktree)
    return Pushed(branch, head, updated=True)


def _same_change(worktree: Path, url: str, tip: str, head: str) -> bool:
    if not has_commit(worktree, tip):
        git("fetch", "--quiet", url, tip, cwd=worktree, check=False)
        if not has_commit(worktree, tip):
            return False
    fmt = "--format=%T %P"
    return git("log", "-1", fmt, tip, cwd=worktree) == git("log", "-1", fmt, head, cwd=worktree)
