"""A run's checkout: the cached mirror of the repository and the run's own worktree in it.

Every kind that works on a repository at a commit (the CI job, the dispatch job, the fuzz job)
checks it out the same way: `ensure_checkout(ctx, job)` syncs the mirror from the
installation's repository and makes the run's worktree at `job.head_sha` (again, on a worker
that has none); `drop_checkout` removes the worktree and keeps the mirror cached.

The worktree comes back as a `Checkout` (`app.engine.git.tree`): the one door to its files.
Git, the sandbox and subprocesses take it as a directory; every read, write, listing and
existence check of its files goes through its methods, which refuse a link anywhere in a path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from app.engine.git.repo import GitError, MirrorCache, upstream_branch_containing
from app.engine.git.tree import Checkout
from app.pipelines.base import RunContext


class AtCommit(Protocol):
    """What a checkout needs of a job: the repository and the commit."""

    repo: str
    head_sha: str


def mirror_cache(ctx: RunContext) -> MirrorCache:
    return MirrorCache(Path(ctx.settings.data_dir) / "git" / "mirrors")


def remote_for(ctx: RunContext, repo: str) -> str:
    """Where to fetch from and push to: always the installation's repository on the configured
    GitHub (`GitHubPort.clone_url`). Never a run parameter: dispatch inputs are untrusted, and a
    `remote` among them must not choose where the token is sent or what gets checked out.

    Offline (the CLI: no GitHub, the person at the terminal named a local repository with
    `--repo`), the `remote` parameter the CLI set is the repository itself."""
    if ctx.github is None:
        remote = ctx.params.get("remote")
        if not remote:
            raise RuntimeError("no GitHub and no local repository to fetch from")
        return str(remote)
    return ctx.github.clone_url(repo)


def worktree_path(ctx: RunContext) -> Path:
    return Path(ctx.settings.data_dir) / "git" / "worktrees" / f"run-{ctx.run_id}"


def ensure_checkout(ctx: RunContext, job: AtCommit) -> Checkout:
    """The run's worktree at the job's commit (made again if this worker has none).

    Only a commit that a branch of the repository contains is checked out (Scrubbot's own
    `scrub/` branches do not count): a fork's pull request head, reachable only at
    `refs/pull/N/head`, is refused whatever the run's parameters say, so no stage can rerun
    it, give it to the fix command, or push it upstream (`GitError`)."""
    cache = mirror_cache(ctx)
    mirror = cache.sync(job.repo, remote_for(ctx, job.repo), job.head_sha)
    prefer = tuple(b for b in (getattr(job, "base", ""), "main", "master") if b)
    if upstream_branch_containing(mirror, job.head_sha, prefer=prefer) is None:
        raise GitError(f"commit {job.head_sha[:12]} is on no branch of {job.repo} (a fork's pull request?): "
                       "Scrubbot checks out, fixes and publishes only commits that an upstream branch contains")
    return Checkout(cache.worktree(job.repo, job.head_sha, worktree_path(ctx)))


def drop_checkout(ctx: RunContext, job: AtCommit) -> None:
    """Remove this worker's worktree of the run, if it has one (the mirror stays cached)."""
    mirror_cache(ctx).remove_worktree(job.repo, worktree_path(ctx))
