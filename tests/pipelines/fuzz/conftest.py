"""Fixtures of the fuzz-job tests: the tlib project in a local bare repo and the fake GitHub."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from app.github.client import GitHubClient
from app.pipelines.base import run_pipeline
from app.pipelines.fuzz.stages import STAGES
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings
from tests.fakes.fake_github import FakeGitHub, fake_github  # noqa: F401  (pytest fixture)
from tests.fakes.fuzz_project import FuzzProject, make_fuzz_project


@dataclass
class FuzzWorld:
    project: FuzzProject
    github: FakeGitHub
    client: GitHubClient
    data_dir: Path

    def context(self, params: dict, run_id: int = 1, **settings) -> MemoryRunContext:
        return MemoryRunContext(run_id=run_id, github=self.client, params={"repo": self.project.repo, **params},
                                settings=Settings(data_dir=self.data_dir, **settings))

    def run(self, params: dict, **settings):
        ctx = self.context(params, **settings)
        finished = run_pipeline(STAGES, ctx, any_queue=True)
        state = {k: v for out in ctx.completed_stages().values() for k, v in out.items()}
        return ctx, finished, state


@pytest.fixture
def fuzz_world(tmp_path, fake_github) -> FuzzWorld:  # noqa: F811
    project = make_fuzz_project(tmp_path / "remote")
    fake_github.add_repo(project.repo)
    client = GitHubClient(token="ghp_test", base_url=fake_github.url, clone_urls={project.repo: project.bare})
    return FuzzWorld(project, fake_github, client, tmp_path / "data")
