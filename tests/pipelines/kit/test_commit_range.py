"""The culprit search's GitHub reads on the trusted side: the commits between two nightlies, how
each can be built (with the overlays' texts, bounded), and the boundary commit's PR.

The planning rules run against a port that answers from dicts (exact hostile answers); the range
and the PRs against the fake GitHub serving a PyTorch history in miniature (REST as GitHub
answers it: nightly branch commits, `compare`, `contents`, `commits/{sha}/pulls`)."""

from __future__ import annotations

import pytest

from app.engine.envs.nightlies import Nightly
from app.engine.verdict.culprit import NIGHTLY, Commit, Culprit
from app.github.client import GitHubClient
from app.github.port import GitHubAPIError
from app.pipelines.kit import commit_range
from app.pipelines.kit.commit_range import Contents, name_pulls, plan_commit, read_range
from app.pipelines.kit.narrowing import DONE, PROBE, PULLS, RANGE, Narrowing
from tests.fakes.culprit_world import REPO, make_culprit_world
from tests.fakes.fake_github import fake_github  # noqa: F401  (fixture)

BASE, COMMIT = "a" * 40, "b" * 40


class Compare:
    """A port answering one `compare` and file reads from dicts, counting the reads."""

    def __init__(self, files: list[dict], status: str = "ahead", texts: dict[str, str] | None = None):
        self.files, self.status, self.texts, self.read = files, status, texts or {}, []

    def compare_commits(self, repo, base, head):
        return {"status": self.status, "files": self.files, "commits": [], "total_commits": 1}

    def file_at(self, repo, path, ref):
        self.read.append((path, ref))
        if self.texts.get(path) == "TOO BIG":
            raise GitHubAPIError(413, f"{path} at {ref[:12]} is too large for the contents API")
        return self.texts.get(path)


def test_the_shipped_python_a_commit_changed_is_read_once_per_blob():
    github = Compare([{"filename": "torch/ops.py", "status": "modified", "sha": "1" * 40},
                      {"filename": "torch/new_name.py", "status": "renamed", "previous_filename": "torch/old_name.py",
                       "sha": "2" * 40},
                      {"filename": "torch/gone.py", "status": "removed", "sha": "0" * 40},
                      {"filename": "test/test_ops.py", "status": "modified"},  # not in the wheel
                      {"filename": "docs/ops.md", "status": "modified"}],
                     texts={"torch/ops.py": "OPS\n", "torch/new_name.py": "NEW\n"})
    contents = Contents()
    build = plan_commit(github, REPO, BASE, COMMIT, "Fix it (#7)", [7], contents)
    assert build.files == {"torch/ops.py": "1" * 40, "torch/old_name.py": None, "torch/new_name.py": "2" * 40,
                           "torch/gone.py": None}
    assert contents.texts == {"1" * 40: "OPS\n", "2" * 40: "NEW\n"} and not build.cannot and not build.compiled
    plan_commit(github, REPO, BASE, "c" * 40, "Later", [], contents)  # the same blobs at a later commit
    assert github.read == [("torch/ops.py", COMMIT), ("torch/new_name.py", COMMIT)]


def test_compiled_sources_are_left_to_the_repro_side_s_build_command():
    github = Compare([{"filename": "aten/src/ATen/native/Conv.cpp", "status": "modified"},
                      {"filename": "torch/ops.py", "status": "modified"}], texts={"torch/ops.py": "x\n"})
    build = plan_commit(github, REPO, BASE, COMMIT, "t", [], Contents())
    assert build.compiled == ["aten/src/ATen/native/Conv.cpp"] and build.files == {} and github.read == []


@pytest.mark.parametrize("github, why", [
    (Compare([{"filename": f"torch/f{n}.py", "status": "modified"} for n in range(300)]), "GitHub lists at most 300"),
    (Compare([], status="diverged"), "does not descend from the nightly's source"),
    (Compare([{"filename": "torch/huge.py", "status": "modified"}], texts={"torch/huge.py": "TOO BIG"}),
     "a changed file could not be read: .*too large for the contents API"),
])
def test_what_cannot_be_built_says_why(github, why):
    build = plan_commit(github, REPO, BASE, COMMIT, "t", [], Contents())
    assert build.files == {} and build.compiled == []
    assert __import__("re").search(why, build.cannot), build.cannot


def test_overlays_past_the_bound_are_no_build_and_say_so():
    files = [{"filename": f"torch/f{n}.py", "status": "modified", "sha": f"{n + 1:040x}"} for n in range(3)]
    github = Compare(files, texts={f"torch/f{n}.py": "x" * 400 for n in range(3)})
    contents = Contents(limit=1000)
    build = plan_commit(github, REPO, BASE, COMMIT, "t", [], contents)
    assert "Python overlay needs more than the 0 MB of changed files a run carries" in build.cannot
    assert contents.size <= 1000  # what was read before the bound stays, and no more
    assert commit_range.MAX_CONTENTS_BYTES == 4 << 20


class Recording:
    """The client, with every call it was asked for written down."""

    def __init__(self, github):
        self.github, self.calls = github, []

    def __getattr__(self, name):
        def call(*args, **kwargs):
            self.calls.append((name, *args))
            return getattr(self.github, name)(*args, **kwargs)
        return call


def nightly(day: str) -> Nightly:
    return Nightly(day, f"2.12.0.dev{day.replace('-', '')}+cpu", f"torch-{day}.whl", f"http://index/{day}.whl")


def pending(world, older_day: str, newer_day: str, older_reproduces: bool = False) -> tuple[Culprit, Narrowing]:
    culprit = Culprit("regressed", NIGHTLY, f"nightly {older_day}", f"nightly {newer_day}", True, "elsewhere/torch",
                      note="The commits between the two nightlies were not searched.")
    return culprit, Narrowing(RANGE, nightly(older_day), nightly(newer_day), world.nightly[older_day],
                              world.nightly[newer_day], older_reproduces)


def test_the_range_is_read_from_the_nightly_branch_to_each_commit_s_build(tmp_path, fake_github):  # noqa: F811
    world = make_culprit_world(tmp_path, days=3, per_day=3, change_at=(1, 1), compiled={(1, 2)})
    world.seed(fake_github)
    github = GitHubClient(token="t", base_url=fake_github.url)
    culprit, narrowing = read_range(github, REPO, *pending(world, "2026-03-01", "2026-03-02"))
    assert narrowing.step == PROBE and culprit.repo == REPO  # the trusted side's repository, not the state's
    assert narrowing.base == world.by_day["2026-03-01"][-1] and narrowing.total == 3
    assert [c.sha for c in narrowing.commits] == world.by_day["2026-03-02"]
    assert [c.named for c in narrowing.commits] == [[2004], [2005], [2006]]  # from the merge bot's messages
    helper, change, kernel = narrowing.commits
    assert set(helper.files) == {"torch/utils_1_0.py"}
    assert set(change.files) == {"torch/utils_1_0.py", "torch/ops.py"}
    assert "return 3 * x" in narrowing.contents[change.files["torch/ops.py"]]
    assert kernel.compiled == ["aten/src/kernel_1_2.cpp"] and kernel.files == {}


def test_a_git_version_that_is_not_a_commit_is_never_asked_about(tmp_path, fake_github):  # noqa: F811
    world = make_culprit_world(tmp_path, days=2, per_day=1)
    world.seed(fake_github)
    culprit, narrowing = pending(world, "2026-03-01", "2026-03-02")
    forged = Narrowing(RANGE, narrowing.older, narrowing.newer, "../../orgs/x", narrowing.newer_git, False)
    github = Recording(GitHubClient(token="t", base_url=fake_github.url))
    found, after = read_range(github, REPO, culprit, forged)
    assert after.step == DONE and "is not a commit" in found.note and github.calls == []


def test_a_range_longer_than_what_is_prepared_stops_at_the_nightlies(tmp_path, fake_github):  # noqa: F811
    world = make_culprit_world(tmp_path, days=2, per_day=3)
    world.seed(fake_github)
    github = GitHubClient(token="t", base_url=fake_github.url)
    found, after = read_range(github, REPO, *pending(world, "2026-03-01", "2026-03-02"), max_commits=2)
    assert after.step == DONE and found.commits_in_range == 3
    assert "more than Scrubbot prepares builds for (2)" in found.note


def test_the_pr_is_the_merged_one_github_names_else_the_message_s(tmp_path, fake_github):  # noqa: F811
    world = make_culprit_world(tmp_path, days=2, per_day=2, merged_every=1)
    world.seed(fake_github)
    sha = world.by_day["2026-03-02"][0]
    culprit = Culprit("regressed", "commit", sha[:12], sha[:12], True, REPO, commit=Commit(sha, "t", None))
    _, narrowing = pending(world, "2026-03-01", "2026-03-02")
    github = Recording(GitHubClient(token="t", base_url=fake_github.url))
    named, after = name_pulls(github, REPO, culprit, narrowing.at(PULLS))
    assert named.pull == world.pulls[sha] and after.step == DONE  # GitHub's merged PR (no message read here)
    candidates = Culprit("regressed", "commit", "x", "y", False, REPO,
                         candidates=[Commit("not-a-sha", "t", 5), Commit(sha, "t", None)])
    github.calls.clear()
    named, _ = name_pulls(github, REPO, candidates, narrowing)
    assert [c.pull for c in named.candidates] == [5, world.pulls[sha]]
    assert github.calls == [("commit_pulls", REPO, sha)]  # a forged sha is not asked about
