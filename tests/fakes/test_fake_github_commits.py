"""The fake GitHub's commit endpoints answer as GitHub does, read through the real client."""

from __future__ import annotations

import httpx
import pytest

from app.github import client as client_module
from app.github.client import GitHubClient
from app.github.port import GitHubAPIError
from tests.fakes.culprit_world import REPO, make_culprit_world
from tests.fakes.fake_github import fake_github  # noqa: F401  (fixture)


@pytest.fixture
def world(tmp_path, fake_github):  # noqa: F811
    made = make_culprit_world(tmp_path, days=3, per_day=3, change_at=(1, 1))
    made.seed(fake_github)
    return made, GitHubClient(token="t", base_url=fake_github.url), fake_github


def test_compare_lists_the_commits_oldest_first_with_the_files_changed(world):
    made, client, _ = world
    first, last = made.commits[0], made.commits[-1]
    compared = client.compare_commits(REPO, first, last)
    assert compared["status"] == "ahead" and compared["total_commits"] == compared["ahead_by"] == 8
    assert [c["sha"] for c in compared["commits"]] == made.commits[1:]
    assert "Pull Request resolved: https://github.com/pytorch/pytorch/pull/" in compared["commits"][0]["commit"]["message"]
    assert {"filename": "torch/ops.py", "status": "modified"}.items() <= \
        next(f for f in compared["files"] if f["filename"] == "torch/ops.py").items()
    assert client.compare_commits(REPO, last, first)["status"] == "behind"


def test_compare_pages_when_asked_and_the_client_follows_them(world, monkeypatch):
    made, client, fake = world
    first, last = made.commits[0], made.commits[-1]
    page = httpx.get(f"{fake.url}/repos/{REPO}/compare/{first}...{last}", params={"per_page": 3, "page": 2},
                     headers={"Authorization": "token t"})
    assert [c["sha"] for c in page.json()["commits"]] == made.commits[4:7]
    assert 'rel="next"' in page.headers["link"] and "files" not in page.json()  # files on the first page only
    monkeypatch.setattr(client_module, "PER_PAGE", 3)
    assert [c["sha"] for c in client.compare_commits(REPO, first, last)["commits"]] == made.commits[1:]


def test_a_nightly_branch_commit_names_its_source(world):
    made, client, _ = world
    day = made.days[1]
    commit = client.get_commit(REPO, made.nightly[day])
    assert commit["commit"]["message"] == f"{day} nightly release ({made.by_day[day][-1]})"


def test_the_pulls_of_a_commit_are_the_ones_it_merged(world):
    made, client, _ = world
    merged = sorted(made.merged)[0]
    unmerged = next(sha for sha in made.commits if sha not in made.merged)
    assert [p["number"] for p in client.commit_pulls(REPO, merged)] == [made.pulls[merged]]
    assert client.commit_pulls(REPO, unmerged) == []


def test_a_file_at_a_commit_and_a_missing_one(world):
    made, client, _ = world
    assert client.file_at(REPO, "torch/ops.py", made.culprit) == made.ops_at[made.culprit]
    assert client.file_at(REPO, "torch/nothing.py", made.culprit) is None
    with pytest.raises(GitHubAPIError) as raised:
        client.get_commit(REPO, "f" * 40)
    assert raised.value.status == 422
