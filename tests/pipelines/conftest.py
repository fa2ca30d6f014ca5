"""Fixtures of the CI-job pipeline tests: a project in a local bare repo and the fake GitHub."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from app.github.client import GitHubClient
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings
from tests.fakes.ci_project import CIProject, make_ci_project
from tests.fakes.fake_github import FakeGitHub, fake_github  # noqa: F401  (pytest fixture)


@dataclass
class CIWorld:
    project: CIProject
    github: FakeGitHub
    client: GitHubClient
    data_dir: Path

    def settings(self, **overrides) -> Settings:
        """Diagnosis experiments are off unless a test turns them on (tests/pipelines/ci_failure/
        test_diagnosis.py covers them): each variant is a whole `pytest` run in the sandbox."""
        return Settings(data_dir=self.data_dir, **{"experiments_budget_s": 0, **overrides})

    def context(self, params: dict, run_id: int = 1, **settings) -> MemoryRunContext:
        return MemoryRunContext(run_id=run_id, github=self.client, settings=self.settings(**settings),
                                params=params)


@pytest.fixture
def ci_world(tmp_path, fake_github) -> CIWorld:  # noqa: F811
    project = make_ci_project(tmp_path / "remote", slow_s=20.0)
    fake_github.add_repo(project.repo)
    client = GitHubClient(token="ghp_test", base_url=fake_github.url, clone_urls={project.repo: project.bare})
    return CIWorld(project, fake_github, client, tmp_path / "data")


def ci_params(project: CIProject, test: str, exception: str, message: str, *, run_id: int = 7) -> dict:
    """`Run(kind=ci_failure).params` as ci_ingest writes them (app/engine/cilogs/README.md)."""
    fingerprint = (f"{abs(hash((test, exception))):x}" * 8)[:64]
    return {
        "repo": project.repo,
        "fingerprint": fingerprint,
        "failure": {"job": "tests (3.11)", "test": test, "kind": "exception", "exception": exception,
                    "message": message, "signature": fingerprint, "excerpt": "", "hint": ""},
        "workflow_run": {"id": run_id, "attempt": 1, "head_sha": project.head_sha, "head_branch": "main",
                         "name": "CI", "html_url": f"https://github.com/{project.repo}/actions/runs/{run_id}"},
        "workflow_run_ids": [run_id - 1, run_id],
        "count": 2,
    }
