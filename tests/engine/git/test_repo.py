"""Mirrors, worktrees, authors, pushes and CODEOWNERS against a local bare repo."""

from __future__ import annotations

import subprocess

import pytest

from app.engine.git.codeowners import owners_for, parse_codeowners, read_codeowners
from app.engine.git.repo import (
    SCRUBBOT_EMAIL,
    GitError,
    MirrorCache,
    commit_files,
    git,
    last_authors,
    push_branch,
    redact,
    remote_branch_tip,
)
from tests.fakes.ci_project import make_ci_project


@pytest.fixture
def project(tmp_path):
    return make_ci_project(tmp_path / "remote")


@pytest.fixture
def checkout(project, tmp_path):
    cache = MirrorCache(tmp_path / "mirrors")
    cache.sync(project.repo, project.bare, project.head_sha)
    return cache.worktree(project.repo, project.head_sha, tmp_path / "wt")


def test_worktree_is_at_the_failing_commit(checkout, project):
    assert git("rev-parse", "HEAD", cwd=checkout).strip() == project.head_sha
    assert (checkout / "tests/test_cache.py").is_file()


def test_sync_fetches_new_commits_into_the_existing_mirror(project, tmp_path):
    cache = MirrorCache(tmp_path / "mirrors")
    mirror = cache.sync(project.repo, project.bare)
    work = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(project.bare), str(work)], check=True)
    git("commit", "--quiet", "--allow-empty", "-m", "later", cwd=work)
    git("push", "--quiet", "origin", "HEAD:main", cwd=work)
    new_sha = git("rev-parse", "HEAD", cwd=work).strip()
    assert cache.sync(project.repo, f"file://{project.bare}", new_sha) == mirror
    assert git("rev-parse", "refs/heads/main", cwd=mirror).strip() == new_sha


def test_worktree_is_reused_and_cleaned_on_retry(project, checkout, tmp_path):
    (checkout / "stray.txt").write_text("left by a crashed run")
    again = MirrorCache(tmp_path / "mirrors").worktree(project.repo, project.head_sha, checkout)
    assert again == checkout and not (checkout / "stray.txt").exists()


def test_unknown_commit_is_an_error(project, tmp_path):
    with pytest.raises(GitError, match="not found"):
        MirrorCache(tmp_path / "m").sync(project.repo, project.bare, "0" * 40)


def test_token_never_appears_in_errors_or_the_mirror_config(tmp_path):
    url = "https://x-access-token:ghs_SECRET123@127.0.0.1:9/acme/calc.git"
    cache = MirrorCache(tmp_path / "m")
    with pytest.raises(GitError) as caught:
        cache.sync("acme/calc", url)
    assert "ghs_SECRET123" not in str(caught.value)
    assert "127.0.0.1:9/acme/calc.git" in str(caught.value)  # where it failed, without the token
    config = (cache.path_for("acme/calc") / "config").read_text()
    assert "ghs_SECRET123" not in config


def test_redact_hides_userinfo_and_explicit_secrets():
    assert redact("fatal: https://u:tok@github.com/o/r") == "fatal: https://***@github.com/o/r"
    assert redact("token abc in text", ("abc",)) == "token *** in text"


def test_last_authors_newest_first_without_the_bot(checkout):
    assert last_authors(checkout, "tests/test_cache.py") == ["Grace Hopper <grace@example.com>"]
    assert last_authors(checkout, "tests") == [
        "Grace Hopper <grace@example.com>",
        "Ada Lovelace <ada@example.com>",
    ]


def test_commit_and_push_then_retry_updates_the_same_branch(checkout, project):
    base = git("rev-parse", "HEAD", cwd=checkout).strip()
    first = commit_files(checkout, {"tests/scrub/test_x_repro.py": "v1\n"}, "scrub: repro")
    pushed = push_branch(checkout, project.bare, "scrub/abc123")
    assert pushed.updated and remote_branch_tip(project.bare, "scrub/abc123") == first
    log = git("log", "-1", "--format=%an <%ae>|%s", first, cwd=checkout).strip()
    assert log == f"Scrubbot <{SCRUBBOT_EMAIL}>|scrub: repro"

    # The same change again (a retried task): nothing to push.
    git("reset", "--quiet", "--hard", base, cwd=checkout)
    commit_files(checkout, {"tests/scrub/test_x_repro.py": "v1\n"}, "scrub: repro")
    assert push_branch(checkout, project.bare, "scrub/abc123").updated is False

    # A different change (new rate): the branch is replaced, not stacked.
    git("reset", "--quiet", "--hard", base, cwd=checkout)
    second = commit_files(checkout, {"tests/scrub/test_x_repro.py": "v2\n"}, "scrub: repro v2")
    assert push_branch(checkout, project.bare, "scrub/abc123").updated
    assert remote_branch_tip(project.bare, "scrub/abc123") == second
    parent = git("rev-parse", f"{second}^", cwd=checkout).strip()
    assert parent == base


def test_codeowners_last_match_wins(checkout):
    rules = read_codeowners(checkout)
    assert owners_for(rules, "calc/__init__.py") == ("@acme/core",)
    assert owners_for(rules, "tests/test_calc.py") == ("@acme/qa",)
    assert owners_for(rules, "tests/test_cache.py") == ("@cache-keeper", "@acme/qa")


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "a/b/c.py", True),
        ("*.py", "a/b/c.pyc", False),
        ("/build/", "build/x/y", True),
        ("/build/", "src/build/x", False),
        ("apps/", "src/apps/x.py", True),
        ("apps/", "apps", False),
        ("docs/*", "docs/a.md", True),
        ("docs/*", "docs/sub/a.md", False),
        ("docs", "docs/sub/a.md", True),
        ("torch/nn", "torch/nn/functional.py", True),
        ("torch/nn", "x/torch/nn/functional.py", False),
        ("**/logs", "deep/er/logs/a.txt", True),
        ("/src/**", "src/a/b", True),
        ("test_?.py", "tests/test_a.py", True),
        ("test_?.py", "tests/test_ab.py", False),
    ],
)
def test_codeowners_patterns(pattern, path, matches):
    rules = parse_codeowners(f"{pattern} @owner\n")
    assert (owners_for(rules, path) == ("@owner",)) is matches


def test_codeowners_rule_without_owners_unowns_and_comments_are_ignored():
    rules = parse_codeowners("# c\n* @all  # trailing\n/vendor/\n!x @nobody\n")
    assert owners_for(rules, "src/a.py") == ("@all",)
    assert owners_for(rules, "vendor/lib.py") == ()


def test_remove_worktree_keeps_the_mirror(project, checkout, tmp_path):
    cache = MirrorCache(tmp_path / "mirrors")
    cache.remove_worktree(project.repo, checkout)
    assert not checkout.exists()
    assert "wt" not in git("worktree", "list", cwd=cache.path_for(project.repo))
    assert cache.worktree(project.repo, project.head_sha, checkout) == checkout  # made again


def test_commits_from_payloads_must_be_object_ids(project, tmp_path):
    cache = MirrorCache(tmp_path / "mirrors")
    for bad in ("--upload-pack=touch /tmp/pwned", "main", "-x"):
        with pytest.raises(GitError):
            cache.sync("acme/calc", project.bare, bad)
        with pytest.raises(GitError):
            cache.worktree("acme/calc", bad, tmp_path / "wt")


def test_the_mirror_is_blobless_and_a_worktree_fetches_only_its_own_files(project, tmp_path):
    work = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(project.bare), str(work)], check=True)
    (work / "big_history.bin").write_bytes(b"x" * 200_000)
    git("add", "big_history.bin", cwd=work)
    git("commit", "--quiet", "-m", "a big file", cwd=work)
    git("rm", "--quiet", "big_history.bin", cwd=work)
    git("commit", "--quiet", "-m", "gone again", cwd=work)
    git("push", "--quiet", "origin", "HEAD:main", cwd=work)
    head = git("rev-parse", "HEAD", cwd=work).strip()
    git("config", "uploadpack.allowFilter", "true", cwd=project.bare)  # as GitHub allows it
    cache = MirrorCache(tmp_path / "mirrors")
    mirror = cache.sync(project.repo, project.bare, head)
    assert git("config", "remote.origin.partialclonefilter", cwd=mirror).strip() == "blob:none"
    missing = [line for line in git("rev-list", "--objects", "--missing=print", "--all", cwd=mirror).splitlines()
               if line.startswith("?")]
    assert missing, "a blobless mirror holds no file contents before a checkout"
    tree = cache.worktree(project.repo, head, tmp_path / "wt", remote=project.bare)
    assert (tree / "tests/test_cache.py").read_text().startswith(("import", '"""', "from", "#"))
    big = git("rev-parse", f"{head}~1:big_history.bin", cwd=mirror).strip()
    still = git("rev-list", "--objects", "--missing=print", "--all", cwd=mirror)
    assert f"?{big}" in still  # history's blobs were never fetched
