"""`/scrub test` end to end: `scrub serve` against the fake GitHub (REST and git over HTTP).

The issue is pytorch/pytorch#77963 (`logaddexp2` with a bool input fails in backward), still
live on torch 2.13; the thread gives the error only as a comment in the code, so the issue here
adds it as a traceback block (what the reporter would paste). The `scrub` label gets a comment offering the verified failing test; a
maintainer's `/scrub test` opens a draft pull request whose branch adds it to the test file that
covers `logaddexp2`. That file, taken from the pushed branch and run in the sandbox, fails with
the issue's error without the marker and xfails with it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.pipelines.kit.testcheck import check_test, standalone_runner
from tests.conftest import ROOT
from tests.fakes.ci_project import _git
from tests.fakes.fake_github import fake_github
from tests.pipelines.issue.test_e2e import (
    RUN_DEADLINE_S,
    comment_payload,
    labeled_payload,
    post_webhook,
    serve,
    wait_for_run,
)

REPO = "Codertocat/Hello-World"  # the repository the webhook fixtures name
CASE = ROOT / "benchmarks/real_issues/cases/r3_56_logaddexp2_bool_backward.json"
TEST_OPS = '''\
import torch


def test_logaddexp2_matches_the_formula():
    a, b = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 0.5])
    torch.testing.assert_close(torch.logaddexp2(a, b), torch.log2(2 ** a + 2 ** b))


def test_logaddexp2_is_symmetric():
    a, b = torch.rand(4), torch.rand(4)
    torch.testing.assert_close(torch.logaddexp2(a, b), torch.logaddexp2(b, a))
'''
ERROR = ("RuntimeError: Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
         "to invert a mask, use the `~` or `logical_not()` operator instead.")
TRACEBACK = f'```\nTraceback (most recent call last):\n  File "repro.py", line 8, in <module>\n{ERROR}\n```'
TEST_SHAPES = "def test_nothing_about_logaddexp():\n    assert [1, 2][-1] == 2\n"


def make_project(tmp: Path) -> Path:
    src, bare = tmp / "src", tmp / "tensorops.git"
    (src / "tests").mkdir(parents=True)
    _git(tmp, "init", "--quiet", "--bare", "--initial-branch=main", str(bare))
    _git(tmp, "init", "--quiet", "--initial-branch=main", str(src))
    (src / "tests/test_ops.py").write_text(TEST_OPS)
    (src / "tests/test_shapes.py").write_text(TEST_SHAPES)
    (src / "ruff.toml").write_text('[lint]\nselect = ["I"]\n')  # the project sorts its imports
    _git(src, "add", "-A")
    _git(src, "commit", "--quiet", "-m", "tests", author="Ada Lovelace|ada@example.com")
    _git(src, "push", "--quiet", str(bare), "main")
    return bare


@pytest.mark.torch
def test_scrub_test_opens_a_pull_request_whose_test_fails_then_xfails(fake_github, serve, tmp_path):
    bare = make_project(tmp_path / "remote")
    fake_github.add_repo(REPO)
    fake_github.serve_git(REPO, bare)
    fake_github.add_collaborator(REPO, "Codertocat")
    issue = json.loads(CASE.read_text())["issue"]
    body = f"{issue['body']}\n\n{TRACEBACK}"
    number = fake_github.add_issue(REPO, title=issue["title"], body=body, user="Codertocat")["number"]
    log = tmp_path / "serve.log"

    answer = post_webhook(serve, "issues", labeled_payload(REPO, number))
    run = wait_for_run(serve, answer.json()["run_id"], log)
    assert (run["status"], run["verdict"]) == ("succeeded", "reproduces"), run
    (comment,) = fake_github.comments(REPO, number)
    assert "A failing test, verified to fail with this error and to xfail with its marker" in comment["body"]
    assert f"def test_issue_{number}():" in comment["body"] and "`/scrub test`" in comment["body"]
    assert not fake_github.pulls(REPO)

    answer = post_webhook(serve, "issue_comment", comment_payload(REPO, number, "Codertocat", "/scrub test"))
    assert answer.status_code == 202, answer.text
    deadline = time.monotonic() + RUN_DEADLINE_S  # the run was "succeeded" before: wait for the PR
    while not fake_github.pulls(REPO) and time.monotonic() < deadline:
        time.sleep(0.5)
    run = wait_for_run(serve, run["id"], log, until={"succeeded", "failed"})
    assert run["status"] == "succeeded", log.read_text()[-3000:]
    (pull,) = fake_github.pulls(REPO)
    assert pull["draft"] is True and pull["head"]["ref"] == f"scrub/issue-{number}"
    assert pull["base"]["ref"] == "main" and f"#{number}" in pull["title"]
    assert f"tests/test_ops.py::test_issue_{number}" in pull["body"] and "with the marker: test XFAIL" in pull["body"]
    assert "Linted: ruff: clean, fixed tests/test_ops.py." in pull["body"]  # the repository's linter ran
    (comment,) = fake_github.comments(REPO, number)  # the same comment, edited
    assert f"A draft pull request adds this failing test: {pull['html_url']}" in comment["body"]

    marked = subprocess.run(["git", "show", f"scrub/issue-{number}:tests/test_ops.py"], cwd=bare,
                            capture_output=True, text=True, check=True).stdout
    # Added to the file that covers logaddexp2, after its own tests, which stay as they were; its
    # imports sorted as the project's ruff configuration asks.
    assert marked.startswith("import pytest\nimport torch\n") and TEST_OPS.split("\n", 1)[1].strip() in marked
    assert marked.index("def test_logaddexp2_is_symmetric") < marked.index(f"def test_issue_{number}()")
    assert "@pytest.mark.xfail(strict=True" in marked and "import pytest" in marked
    unmarked = "".join(line for line in marked.splitlines(keepends=True) if "pytest.mark.xfail" not in line)
    name = f"test_issue_{number}"
    args = dict(devices=[], failing=[], style="pytest", exception="RuntimeError", timeout_s=300,
                message="Subtraction, the `-` operator, with a bool tensor is not supported")
    with standalone_runner("bwrap", sys.executable, 4096, False) as runner:
        without = check_test(runner, "tests/test_ops.py", unmarked, name, marked=False, **args)
        with_marker = check_test(runner, "tests/test_ops.py", marked, name, marked=True, **args)
    assert without.ok and without.statuses == {"": "FAILED"}, without.output
    assert with_marker.ok and with_marker.statuses == {"": "XFAIL"}, with_marker.output
