"""A fork's pull request against the CI fixture project, and the `workflow_run` deliveries
GitHub sends for it.

`add_fork_pull(project, number)` commits on top of `main` outside any branch of the
upstream repository and stores the commit where GitHub keeps a fork PR's head in the base
repository: `refs/pull/<number>/head` (fetchable by its id, on no branch). `fork_run_payload`
is the real `workflow_run.completed` fixture (tests/fixtures/github/webhooks/) turned into the
failure of a run of that commit: `event: pull_request`, `head_repository` the fork, and
`pull_requests` empty, as GitHub leaves it for a fork's PR.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from tests.conftest import ROOT
from tests.engine.cilogs.samples import Job, build_archive, passing_lines, setup_step
from tests.fakes.ci_project import DETERMINISTIC_TEST, CIProject, _git

FIXTURE = ROOT / "tests/fixtures/github/webhooks/workflow_run/completed.payload.json"
FORK_OWNER = "mallory"
FORK_TEST_LINE = f"FAILED {DETERMINISTIC_TEST} - ZeroDivisionError: division by zero"


def add_fork_pull(project: CIProject, number: int, tmp: Path) -> str:
    """A commit by the fork's owner at `refs/pull/<number>/head` of the upstream repo; its id."""
    src = tmp / f"fork-{number}"
    _git(tmp, "clone", "--quiet", str(project.bare), str(src))
    (src / "calc" / "evil.py").write_text("print('code from a fork')\n")
    _git(src, "add", ".")
    _git(src, "commit", "--quiet", "-m", "a change from a fork", author="Mallory|m@example.com")
    sha = _git(src, "rev-parse", "HEAD")
    _git(src, "push", "--quiet", str(project.bare), f"HEAD:refs/pull/{number}/head")
    return sha


def failing_archive(job_name: str = "tests (3.11)", line: str = FORK_TEST_LINE) -> bytes:
    """A run's log archive whose job `job_name` failed with the pytest summary `line`."""
    job = Job(job_name)
    setup_step(job).step("Test", passing_lines(10) + [line, "1 failed, 1 passed in 0.10s"], exit_code=1)
    return build_archive([job])


def run_payload(repo: str, run_id: int, *, head_sha: str, head_repo: str, event: str = "pull_request",
                head_branch: str = "patch-1", attempt: int = 1, conclusion: str = "failure",
                name: str = "CI", path: str = ".github/workflows/ci.yml") -> dict:
    """`workflow_run.completed` of `repo` as GitHub sends it, from the real fixture."""
    payload = copy.deepcopy(json.loads(FIXTURE.read_text()))
    owner = repo.split("/")[0]
    payload["repository"].update(full_name=repo, name=repo.split("/")[1], default_branch="main",
                                 html_url=f"https://github.com/{repo}")
    payload["repository"]["owner"]["login"] = owner
    run = payload["workflow_run"]
    run.update(id=run_id, conclusion=conclusion, event=event, head_sha=head_sha, head_branch=head_branch,
               run_attempt=attempt, name=name, path=path, pull_requests=[],
               html_url=f"https://github.com/{repo}/actions/runs/{run_id}")
    run["repository"] = copy.deepcopy(payload["repository"])
    fork = head_repo.lower() != repo.lower()
    run["head_repository"] = {**copy.deepcopy(payload["repository"]), "full_name": head_repo,
                              "name": head_repo.split("/")[1], "fork": fork,
                              "owner": {**payload["repository"]["owner"], "login": head_repo.split("/")[0]}}
    payload["installation"] = {"id": 1}
    return payload


def fork_run_payload(repo: str, run_id: int, head_sha: str) -> dict:
    return run_payload(repo, run_id, head_sha=head_sha, head_repo=f"{FORK_OWNER}/{repo.split('/')[1]}")
