"""The default branch of a repository and its tip, read from the installation's remote.

A run that starts from an issue (not a commit) works on the default branch: `default_branch`
asks the remote which branch `HEAD` names (`git ls-remote --symref`), syncs the cached mirror
and returns (branch, commit). A remote that names none falls back to `main`, then `master`.
"""

from __future__ import annotations

from app.engine.git.repo import GitError, git, remote_url
from app.pipelines.base import RunContext
from app.pipelines.kit.checkout import mirror_cache, remote_for


def default_branch(ctx: RunContext, repo: str) -> tuple[str, str]:
    remote = remote_for(ctx, repo)
    mirror = mirror_cache(ctx).sync(repo, remote)
    listed = git("ls-remote", "--symref", remote_url(remote), "HEAD", check=False)
    named = [line.split()[1].removeprefix("refs/heads/") for line in listed.splitlines()
             if line.startswith("ref: ") and line.rstrip().endswith("HEAD")]
    for branch in [*named, "main", "master"]:
        sha = git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}", cwd=mirror,
                  check=False).strip()
        if sha:
            return branch, sha
    raise GitError(f"{repo} has no default branch to work on")
