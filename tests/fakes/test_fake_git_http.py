"""The fake GitHub serves git over HTTP: clone with the token URL, push back, 401 without it
(a public repository's fetch excepted), narrowed installation tokens held to their scope."""

from __future__ import annotations

import subprocess

from app.engine.git.repo import GitError, MirrorCache, git, remote_branch_tip
from app.github.client import GitHubClient
from tests.fakes.ci_project import make_ci_project
from tests.fakes.fake_github import FakeGitHub

import pytest


def test_clone_fetch_and_push_through_the_token_url(tmp_path):
    project = make_ci_project(tmp_path / "remote", slow_s=1.0)
    with FakeGitHub(token="ghp_fake_git_token_0123456789") as fake:
        fake.add_repo(project.repo)
        fake.serve_git(project.repo, project.bare)
        url = GitHubClient(token="ghp_fake_git_token_0123456789", base_url=fake.url).clone_url(project.repo)
        assert url.startswith("http://x-access-token:ghp_fake_git_token_0123456789@127.0.0.1:")
        cache = MirrorCache(tmp_path / "mirrors")
        cache.sync(project.repo, url, project.head_sha)
        tree = cache.worktree(project.repo, project.head_sha, tmp_path / "wt")
        git("commit", "--allow-empty", "-qm", "scrub", cwd=tree)
        git("push", "-q", url, "HEAD:refs/heads/scrub/x", cwd=tree)
        assert remote_branch_tip(project.bare, "scrub/x") == git("rev-parse", "HEAD", cwd=tree).strip()
        assert any(r.auth == "basic" for r in fake.requests)
        fake.set_private(project.repo)  # a public repository answers anyone's fetch, as on GitHub
        with pytest.raises(GitError) as info:
            git("ls-remote", url.replace("ghp_fake_git_token_0123456789", "wrong"))
        assert "wrong" not in str(info.value)


def test_a_public_repository_is_fetched_anonymously_and_a_narrowed_token_cannot_push(tmp_path):
    project = make_ci_project(tmp_path / "remote", slow_s=1.0)
    other = make_ci_project(tmp_path / "other", slow_s=1.0)
    with FakeGitHub() as fake:
        fake.add_repo(project.repo)
        fake.serve_git(project.repo, project.bare)
        fake.add_repo("o/other")
        fake.serve_git("o/other", other.bare)
        anonymous = f"{fake.url}/{project.repo}.git"
        assert project.head_sha in git("ls-remote", anonymous)
        token = fake.new_installation_token(1, repositories=[project.repo.split("/")[1]], permissions={"contents": "read"})
        narrowed = anonymous.replace("http://", f"http://x-access-token:{token}@")
        fake.set_private(project.repo)
        fake.set_private("o/other")
        with pytest.raises(GitError):
            git("ls-remote", anonymous)  # private now: no anonymous fetch
        cache = MirrorCache(tmp_path / "mirrors")
        cache.sync(project.repo, narrowed, project.head_sha)
        tree = cache.worktree(project.repo, project.head_sha, tmp_path / "wt")
        git("commit", "--allow-empty", "-qm", "scrub", cwd=tree)
        with pytest.raises(GitError):
            git("push", "-q", narrowed, "HEAD:refs/heads/scrub/x", cwd=tree)
        assert remote_branch_tip(project.bare, "scrub/x") is None
        with pytest.raises(GitError):
            git("ls-remote", narrowed.replace(project.repo, "o/other"))
