"""A draft PR's generated test re-run on the default branch: still failing, or fixed and closed."""

from __future__ import annotations

import subprocess

import pytest

from app.github.client import GitHubClient
from app.pipelines.base import run_pipeline
from app.pipelines.memory import MemoryRunContext
from app.pipelines.progression.pulls import read, runs_plan
from app.pipelines.progression.stages import STAGES
from app.settings import Settings
from tests.fakes.ci_project import _git, make_ci_project
from tests.fakes.fake_github import fake_github  # noqa: F401  (fixture)

# What the CI job generated for tests/test_calc.py::test_divide_by_zero (an expected failure).
GENERATED = '''\
import unittest

from calc import safe_divide


class TestScrubDivideByZero(unittest.TestCase):
    @unittest.expectedFailure
    def test_divide_by_zero(self):
        self.assertEqual(safe_divide(1, 0), float("inf"))
'''
FIXED_CALC = '''\
def add(a, b):
    return a + b


def safe_divide(a, b):
    """Division that returns inf instead of raising."""
    return a / b if b else float("inf")
'''


@pytest.fixture
def project(tmp_path, fake_github):  # noqa: F811
    made = make_ci_project(tmp_path / "remote")
    fake_github.add_repo(made.repo)
    fake_github.serve_git(made.repo, made.bare)
    pull = fake_github.add_pull(made.repo, "scrub/0123abcd", title="[scrub] Reproduction test for test_divide_by_zero")
    client = GitHubClient(token="t", base_url=fake_github.url, clone_urls={made.repo: made.bare})
    return made, pull["number"], client


def land_fix(project, tmp_path) -> str:
    made = project[0]
    work = tmp_path / "fixer"
    _git(tmp_path, "clone", "--quiet", str(made.bare), str(work))
    (work / "calc" / "__init__.py").write_text(FIXED_CALC)
    _git(work, "commit", "--quiet", "-am", "Return inf on division by zero (#31)\n\nPull Request resolved: "
         "https://github.com/acme/calc/pull/31", author="Ada Lovelace|ada@example.com")
    _git(work, "push", "--quiet", "origin", "main")
    return _git(work, "rev-parse", "HEAD")


def recheck(project, tmp_path, run_id: int = 1) -> MemoryRunContext:
    made, number, client = project
    params = {"repo": made.repo, "number": number, "target": "pull", "source_run": 5, "last_state": "reproduces",
              "reason": "periodic: never checked", "base": "main", "failed_at": made.head_sha,
              "test_path": "tests/test_scrub_divide.py", "test_source": GENERATED, "test_kind": "repro",
              "rerun": {"runs": 5, "failures": 5, "interval": [0.5655, 1.0]}, "build": {"label": ""}}
    ctx = MemoryRunContext(run_id=run_id, github=client, params=params,
                           settings=Settings(data_dir=tmp_path / "data", sandbox="bwrap", repro_timeout=60))
    run_pipeline(STAGES, ctx, any_queue=True)
    return ctx


def test_a_test_that_still_fails_leaves_the_pr_as_it_is(project, tmp_path, fake_github):  # noqa: F811
    ctx = recheck(project, tmp_path)
    assert ctx.verdict == "reproduces"
    assert fake_github.writes == []


def test_a_test_that_passes_on_the_default_branch_closes_its_pr_with_the_fixing_pr(project, tmp_path,
                                                                                    fake_github):  # noqa: F811
    tip = land_fix(project, tmp_path)
    ctx = recheck(project, tmp_path)
    assert ctx.verdict == "fixed"
    made, number, _ = project
    (comment,) = fake_github.comments(made.repo, number)
    assert comment["body"].startswith(f"The generated test now passes on `main` at {tip[:12]} (4 runs in the sandbox")
    assert "fixed by #31" in comment["body"]
    assert f"the CI job verified that this test fails at {made.head_sha[:12]}" in comment["body"]
    assert fake_github.pulls(made.repo)[0]["state"] == "closed"
    assert subprocess.run(["git", "-C", str(made.bare), "branch", "--list", "scrub/*"], capture_output=True,
                          text=True).stdout == ""  # nothing pushed


def test_reading_a_run_of_the_unmarked_test():
    assert read({"passed": 1}, 0, False) == "absent"
    assert read({"failed": 1}, 1, False) == "reproduces"
    assert read({"error": 1}, 1, False) == "unknown"  # the test could not even run: say nothing
    assert read({}, 5, False) == "unknown" and read({"passed": 1}, 0, True) == "unknown"
    assert runs_plan({"interval": [0.5655, 1.0]}).clean_runs == 4  # failed 5 of 5 reruns
    assert runs_plan({"interval": [0.12, 0.6]}).clean_runs == 10  # flaky: up to the cap
    assert runs_plan({"interval": [0.9, 1.0]}).clean_runs == 3  # never fewer
    assert runs_plan({}).clean_runs == 10  # nothing measured: sized for 20%, capped
