"""From two releases to the PR: nightlies, then commits, over a PyTorch history in miniature
(every step of the search in one process: `find_culprit`; the trust split's stages are
`tests/pipelines/kit/test_culprit_stages.py` and `tests/workers/test_culprit_split.py`).

The history, its nightly wheels (a PEP 503 index on loopback) and its PRs (the fake GitHub,
`compare`, `commits/{sha}/pulls`, `contents`) are real; the scripted tests replace only the runs
(`kit.probes.run_on`) and the environment installs, so a flaky bug's pattern and an untestable
build are exact. The last test runs everything: installs, overlays, the sandbox.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from app.engine.envs.nightly_env import wheel_env
from app.engine.envs.variants import build_from_version_py
from app.engine.verdict.bisect_probe import ProbePlan
from app.engine.verdict.culprit import COMMIT, NIGHTLY, describe, evidence
from app.github.client import GitHubClient
from app.pipelines.kit import builds, probes
from app.pipelines.kit.culprit import Point, Search
from app.pipelines.kit.culprit_stages import find_culprit
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings
from tests.fakes.culprit_world import (
    NEW_RELEASE, OLD_RELEASE, REPO, REPORTED, REPRO, CulpritWorld, make_culprit_world,
)
from tests.fakes.fake_github import fake_github  # noqa: F401  (fixture)
from tests.fakes.torch_nightlies import WheelIndex

BUG = {"outcome": "error", "exception": "AssertionError", "message": "scale(1) is 3"}
CLEAN = {"outcome": "passed"}
OTHER = {"outcome": "error", "exception": "ModuleNotFoundError", "message": "No module named 'torch._C'"}
OLDER, NEWER = Point(OLD_RELEASE, OLD_RELEASE, False), Point(NEW_RELEASE, NEW_RELEASE, True)


class Scripted:
    """Runs by build: a build with the change plays `buggy` in turn, one without plays CLEAN;
    `other_days` play OTHER (another error: untestable)."""

    def __init__(self, world: CulpritWorld, buggy: list[dict], other_days: tuple[str, ...] = ()):
        self.world, self.buggy, self.other_days = world, buggy, other_days
        self.order = world.commits
        self.runs: dict[str, int] = {}
        self.fixes = False  # True: the change fixes the bug

    def has_change(self, build: str) -> bool:
        sha = self.world.by_day[build][-1] if build in self.world.by_day else build
        return self.order.index(sha) >= self.order.index(self.world.culprit)

    def run_on(self, settings, python, source, *, label="", timeout_s=None):
        build = Path(python).parent.parent.name.removeprefix("commit-")
        played = self.runs[build] = self.runs.get(build, 0) + 1
        if build in self.other_days:
            run = OTHER
        elif self.has_change(build) != self.fixes:
            run = self.buggy[(played - 1) % len(self.buggy)]
        else:
            run = CLEAN
        return dict(run) | {"environment": label, "output_tail": ""}


@pytest.fixture
def scripted(tmp_path, fake_github, monkeypatch):  # noqa: F811
    def make(buggy: list[dict], *, other_days: tuple[str, ...] = (), **shape):
        world = make_culprit_world(tmp_path / "world", **shape)
        world.seed(fake_github)
        index = WheelIndex(world.wheels(tmp_path / "index"))
        script = Scripted(world, buggy, other_days)
        by_nightly = {world.nightly[day]: day for day in world.days}
        monkeypatch.setattr(probes, "run_on", script.run_on)
        monkeypatch.setattr(builds, "nightly_env", lambda settings, nightly: tmp_path / "envs" / nightly.date)
        monkeypatch.setattr(builds, "git_version", lambda env: next(c for c, d in by_nightly.items() if d == env.name))
        monkeypatch.setattr(builds, "overlay_env", lambda base, files, root, key, note: tmp_path / f"commit-{note['commit']}")
        settings = Settings(data_dir=tmp_path / "data", sandbox="bwrap", torch_nightly_index_url=index.url)
        ctx = MemoryRunContext(run_id=1, github=GitHubClient(token="t", base_url=fake_github.url), settings=settings)
        return world, script, ctx, index
    yield make


def test_a_regression_is_named_by_its_pr_with_the_nightlies_around_it(scripted):
    world, _, ctx, index = scripted([BUG])
    with index:
        culprit = find_culprit(ctx, Search(REPRO, REPORTED, ProbePlan.for_rate(1.0)), OLDER, NEWER)
    assert culprit.level == COMMIT and culprit.certain and culprit.commit.sha == world.culprit
    assert culprit.pull == world.pulls[world.culprit] == 2011
    assert describe(culprit, REPO) == "regressed in #2011 (nightly 2026-03-03 passes, 2026-03-04 fails)"
    assert [level.level for level in culprit.levels] == [NIGHTLY, COMMIT]


def test_a_flaky_culprit_is_found_with_probes_sized_to_its_rate(scripted):
    world, script, ctx, index = scripted([CLEAN, CLEAN, BUG])  # the change shows on every third run
    plan = ProbePlan.for_rate(0.3)  # the low end of the rate measured now
    with index:
        culprit = find_culprit(ctx, Search(REPRO, REPORTED, plan), OLDER, NEWER)
        script.runs.clear()
        hasty = find_culprit(ctx, Search(REPRO, REPORTED, ProbePlan(1, 1.0)), OLDER, NEWER)
    assert culprit.certain and culprit.commit.sha == world.culprit
    nightly = culprit.levels[0].result
    ran = {r["label"]: r["runs"] for r in nightly.releases}
    assert ran["nightly 2026-03-04"] == 3  # reproduced on its third run
    assert ran["nightly 2026-03-03"] == plan.clean_runs == 9  # clean only after the runs the rate needs
    # One run per build would have called the first flaky builds clean and blamed a later commit.
    assert hasty.commit is None or hasty.commit.sha != world.culprit


def test_an_untestable_nightly_is_a_hole_not_a_boundary(scripted):
    world, _, ctx, index = scripted([BUG], other_days=("2026-03-04",))  # the nightly with the change
    with index:
        culprit = find_culprit(ctx, Search(REPRO, REPORTED, ProbePlan.for_rate(1.0)), OLDER, NEWER)
    nightly = culprit.levels[0].result
    assert not nightly.certain and nightly.untested == ["nightly 2026-03-04"]
    # The commits of the untested day are built over the older nightly: the PR is still found.
    assert culprit.commit.sha == world.culprit and culprit.certain
    assert describe(culprit, REPO) == ("regressed in #2011 (nightly 2026-03-03 passes, 2026-03-05 fails; "
                                       "2026-03-04 could not be tested)")
    assert any("could not be tested (ModuleNotFoundError" in line for line in evidence(culprit))


def test_commits_that_need_a_compiled_build_leave_a_range_of_candidates(scripted):
    world, _, ctx, index = scripted([BUG], compiled={(3, 0)})  # C++ changed just before the change
    with index:
        culprit = find_culprit(ctx, Search(REPRO, REPORTED, ProbePlan.for_rate(1.0)), OLDER, NEWER)
    assert culprit.level == COMMIT and not culprit.certain and culprit.commit is None
    assert [c.sha for c in culprit.candidates] == world.by_day["2026-03-04"]
    assert describe(culprit, REPO) == ("regressed in one of #2010, #2011, #2012 "
                                       "(nightly 2026-03-03 passes, 2026-03-04 fails)")
    assert any("needs a build: 1 compiled sources changed" in line for line in evidence(culprit))


def test_a_fix_is_named_by_its_pr(scripted):
    world, script, ctx, index = scripted([BUG], fix=True)
    script.fixes = True  # the builds with the change are the clean ones
    older, newer = Point(OLD_RELEASE, OLD_RELEASE, True), Point(NEW_RELEASE, NEW_RELEASE, False)
    with index:
        culprit = find_culprit(ctx, Search(REPRO, REPORTED, ProbePlan.for_rate(1.0)), older, newer)
    assert culprit.commit.sha == world.culprit
    assert describe(culprit, REPO) == "fixed by #2011 (nightly 2026-03-03 fails, 2026-03-04 passes)"


def test_end_to_end_installs_overlays_and_the_sandbox_with_a_nightly_that_cannot_be_installed(
        tmp_path, fake_github):  # noqa: F811
    # Four days, two PRs a day; the change is day 3's second PR; nightly 2026-03-02 requires a missing package.
    world = make_culprit_world(tmp_path / "world", days=4, per_day=2, change_at=(2, 1), broken_day=1)
    world.seed(fake_github)
    root = world.wheels(tmp_path / "index")
    releases = {}
    for version in (OLD_RELEASE, NEW_RELEASE):
        wheel = root / "simple" / "torch" / f"torch-{version}-py3-none-any.whl"
        with zipfile.ZipFile(wheel) as archive:
            build = build_from_version_py(archive.read("torch/version.py").decode())
        releases[version] = builds.python_of(wheel_env(wheel, build, tmp_path / "releases"))
    with WheelIndex(root) as index:
        settings = Settings(data_dir=tmp_path / "data", sandbox="bwrap", torch_nightly_index_url=index.url,
                            repro_timeout=60)
        ctx = MemoryRunContext(run_id=1, github=GitHubClient(token="t", base_url=fake_github.url), settings=settings)
        older = Point(OLD_RELEASE, OLD_RELEASE, False, python=releases[OLD_RELEASE])
        newer = Point(NEW_RELEASE, NEW_RELEASE, True, python=releases[NEW_RELEASE])
        culprit = find_culprit(ctx, Search(REPRO, REPORTED, ProbePlan.for_rate(1.0)), older, newer)
    assert culprit.commit is not None and culprit.commit.sha == world.culprit, evidence(culprit)
    assert describe(culprit, REPO) == ("regressed in #2006 (nightly 2026-03-01 passes, 2026-03-03 fails; "
                                       "2026-03-02 could not be tested)")
    lines = "\n".join(evidence(culprit))
    assert "- nightly 2026-03-02: could not be tested (could not be installed: ERROR: " in lines, lines
    assert "scrub-missing-dependency" in lines
