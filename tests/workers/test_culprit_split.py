"""Culprits under the trust split: the issue kind's "regressed in #N" and progression's "fixed in
X by #N" through the real worker path, every repro stage run as a job on a host with no GitHub.

The trusted side is `execute_run` / `record_result` over a real database with the fake GitHub
(REST and git over HTTP); each job it sends crosses as JSON to `run_job` (the repro worker: its
`ctx.github` can only give a clone URL) with settings of its own (another data directory, no
token). The builds are real: a PyTorch history in miniature (`tests/fakes/culprit_world.py`),
its nightly wheels on a loopback PEP 503 index, installed and run in the sandbox.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from app.db import queries
from app.db.models import StageEvent
from app.engine.envs.nightly_env import wheel_env
from app.engine.envs.variants import build_from_version_py
from app.github.client import GitHubClient
from app.pipelines.kit import builds
from app.settings import Settings
from tests.fakes.culprit_world import (
    NEW_RELEASE,
    OLD_RELEASE,
    REPO,
    REPORTED,
    REPRO,
    make_culprit_world,
)
from tests.fakes.fake_github import fake_github  # noqa: F401  (fixture)
from tests.fakes.torch_nightlies import WheelIndex
from tests.foundation import migrated_database
from workers.enqueue import RecordingEnqueuer
from workers.execute import WorkerServices, execute_run
from workers.jobs import ReproJob
from workers.repro import run_job
from workers.results import record_result

OLD, NEW = "2.11", "2.12"
MAINTAINER = "ada"
TOKEN = "ghp_the_trusted_side_s_token_only"
MAX_JOBS = 8  # a run that keeps sending jobs is a bug (a stage sent again and again), not slowness


def release_envs(root: Path, tmp: Path) -> dict[str, str]:
    """The two releases of the world's index, installed: label -> interpreter."""
    made = {}
    for label, version in ((OLD, OLD_RELEASE), (NEW, NEW_RELEASE)):
        wheel = root / "simple" / "torch" / f"torch-{version}-py3-none-any.whl"
        with zipfile.ZipFile(wheel) as archive:
            build = build_from_version_py(archive.read("torch/version.py").decode())
        made[label] = builds.python_of(wheel_env(wheel, build, tmp / "releases"))
    return made


class Split:
    """A trusted side (database, GitHub) and a repro side (neither), each with its own data."""

    def __init__(self, tmp: Path, fake, envs: dict[str, str], index_url: str):
        common = {"sandbox": "bwrap", "repro_timeout": 60, "torch_nightly_index_url": index_url,
                  "environments": ",".join(f"{k}={v}" for k, v in envs.items())}
        self.trusted = Settings(data_dir=tmp / "trusted", github_api_url=fake.url, github_token=TOKEN, **common)
        self.repro = Settings(data_dir=tmp / "repro-host", **common)
        self.trusted.ensure_data_dir()
        self.database = migrated_database(self.trusted.resolved_database_url)
        self.enqueuer = RecordingEnqueuer()
        client = GitHubClient(token=TOKEN, base_url=fake.url)
        self.services = WorkerServices(self.trusted, self.database, self.enqueuer, github_for=lambda inst: client)
        self.jobs: list[tuple[str, str]] = []  # (first stage, queue) of each job sent
        self.on_repro: list[str] = []  # the stages the repro side ran
        self.sent: list[str] = []  # what crossed the broker, both ways

    def drive(self, run_id: int) -> str:
        """The run to its end: each job through a repro worker, each result back."""
        outcome = execute_run(run_id, self.services)
        while self.enqueuer.jobs:
            job, queue = self.enqueuer.jobs.pop(0)
            assert len(self.jobs) < MAX_JOBS, f"the run keeps sending jobs: {self.jobs}"
            self.jobs.append((job["stage"], queue))
            self.sent.append(json.dumps(job))
            parsed = ReproJob.from_dict(json.loads(self.sent[-1]))  # as it crosses the broker
            result = run_job(parsed, self.repro, beat=lambda stage: None)
            self.on_repro += [record.stage for record in result.stages]
            self.sent.append(json.dumps(result.to_dict()))
            outcome = record_result(json.loads(self.sent[-1]), self.services)
        return outcome

    def stages(self, run_id: int) -> dict[str, StageEvent]:
        with self.database.session() as session:
            return {e.stage: e for e in queries.run_detail(session, run_id).stages}

    def close(self) -> None:
        self.database.dispose()


@pytest.fixture
def world_split(tmp_path, fake_github):  # noqa: F811
    made = []

    def make(**shape):
        world = make_culprit_world(tmp_path / "world", days=4, per_day=2, **shape)
        world.seed(fake_github)
        root = world.wheels(tmp_path / "index")
        index = WheelIndex(root).__enter__()
        split = Split(tmp_path, fake_github, release_envs(root, tmp_path), index.url)
        made.append((index, split))
        return world, split

    yield make
    for index, split in made:
        split.close()
        index.__exit__(None, None, None)


def test_an_issue_s_regression_is_named_by_its_pr_with_its_repro_stages_on_a_host_without_github(
        world_split, fake_github):  # noqa: F811
    world, split = world_split(change_at=(2, 1))
    fake_github.add_collaborator(REPO, MAINTAINER, role="triage")
    body = f"Since the nightlies, scale triples.\n\n```python\n{REPRO}```\n\n```\nAssertionError: scale(1) is 3\n```\n"
    fake_github.add_issue(REPO, 77, title="scale(1) is 3", body=body, user=MAINTAINER)
    with split.database.session() as session:
        run = queries.create_run(session, kind="issue", repo=REPO, issue=77, trigger="label",
                                 params={"repo": REPO, "issue": 77, "labeled_by": MAINTAINER, "force_bisect": True})
        session.commit()
        run_id = run.id
    assert split.drive(run_id) == "succeeded", split.stages(run_id)
    stages = split.stages(run_id)
    culprit = stages["publish"].output["publish"]["comment"]
    assert "Culprit: regressed in #2006 (nightly 2026-03-02 passes, 2026-03-03 fails)." in culprit, culprit
    (comment,) = fake_github.comments(REPO, 77)
    assert "Culprit: regressed in #2006" in comment["body"] and world.pulls[world.culprit] == 2006
    # The code ran on the repro side; the GitHub reads on the trusted side, between its jobs.
    assert split.jobs == [("reproduce", "repro-cpu"), ("culprit_commits", "repro-cpu")]
    assert split.on_repro == ["reproduce", "bisect", "culprit_commits", "minimize", "stress", "diagnose", "test",
                              "place_test"]
    assert [stages[s].status for s in ("culprit_range", "culprit_commits", "culprit_pr")] == ["done"] * 3
    # The culprit commit's Python reached the repro side in the state: its overlay is what was probed.
    texts = stages["culprit_range"].output["narrowing"]["contents"].values()
    assert any("return 3 * x" in text for text in texts)
    assert "narrowing" in stages["culprit_commits"].output and \
        stages["culprit_commits"].output["narrowing"]["contents"] == {}  # not carried further
    assert not any(TOKEN in message for message in split.sent)


def test_progression_s_fix_is_named_by_its_pr_with_its_repro_stages_on_a_host_without_github(
        world_split, fake_github):  # noqa: F811
    world, split = world_split(change_at=(2, 1), fix=True)
    fake_github.add_issue(REPO, 78, title="scale(1) is 3")
    newest = builds_of(split.trusted)[-1]
    params = {"repo": REPO, "number": 78, "target": "issue", "source_run": 1, "title": "scale(1) is 3",
              "last_state": "reproduces", "reason": f"new build {newest['label']}", "source": REPRO,
              "reported": REPORTED, "trusted": True, "build": newest,
              "reproduction": {"runs": 5, "reproduced": 5, "interval": [0.5655, 1.0], "rate": 1.0},
              "last_build": {"label": OLD, "version": OLD_RELEASE, "kind": "release",
                             "python": split.trusted.environment_map[OLD]}}
    with split.database.session() as session:
        run = queries.create_run(session, kind="progression", repo=REPO, issue=78, trigger="schedule", params=params)
        session.commit()
        run_id = run.id
    assert split.drive(run_id) == "succeeded", split.stages(run_id)
    (comment,) = fake_github.comments(REPO, 78)
    assert comment["body"].startswith(f"This issue no longer reproduces on PyTorch {newest['label']}: "
                                      "fixed in nightly 2026-03-03 by #2006."), comment["body"]
    assert "Culprit: fixed by #2006 (nightly 2026-03-02 fails, 2026-03-03 passes)." in comment["body"]
    assert world.pulls[world.culprit] == 2006
    assert split.jobs == [("recheck", "repro-cpu"), ("culprit_commits", "repro-cpu")]
    assert split.on_repro == ["recheck", "culprit", "culprit_commits"]
    assert fake_github.issue(REPO, 78)["state"] == "closed"
    assert not any(TOKEN in message for message in split.sent)


def builds_of(settings: Settings) -> list[dict]:
    from app.pipelines.progression.schedule import nightly_builds

    return nightly_builds(settings)
