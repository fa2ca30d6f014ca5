"""The fake GitHub itself: the GitHub behaviours other tests rely on."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx

from tests.fakes.fake_github import FakeGitHub
from tests.fakes.fake_github_state import FakeGitHubState

REPO = "o/r"


def api(fake: FakeGitHub, token: str = "t") -> httpx.Client:
    return httpx.Client(base_url=fake.url, headers={"Authorization": f"token {token}"})


def test_auth_rules(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(REPO, 1)
    assert httpx.get(f"{fake_github.url}/repos/{REPO}/issues/1").status_code == 401
    jwt_like = {"Authorization": "Bearer aaa.bbb.ccc"}
    assert httpx.get(f"{fake_github.url}/repos/{REPO}/issues/1", headers=jwt_like).status_code == 401
    assert httpx.post(f"{fake_github.url}/app/installations/1/access_tokens",
                      headers={"Authorization": "token t"}).status_code == 401
    # An installation token only reaches its installation's repositories.
    fake_github.add_repo("other/repo", installation_id=2)
    fake_github.add_issue("other/repo", 1)
    token = fake_github.new_installation_token(1)
    with api(fake_github, token) as c:
        assert c.get(f"/repos/{REPO}/issues/1").status_code == 200
        assert c.get("/repos/other/repo/issues/1").status_code == 404


def test_not_found_shapes(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(REPO, 1, labels=["a"])
    with api(fake_github) as c:
        r = c.get("/repos/nobody/nothing/issues/1")
        assert r.status_code == 404 and r.json()["message"] == "Not Found"
        assert c.delete(f"/repos/{REPO}/issues/1/labels/b").status_code == 404
        assert c.get(f"/repos/{REPO}/collaborators/x").status_code == 404
        assert c.get(f"/repos/{REPO}/actions/runs/1").status_code == 404


def test_logs_redirect_and_signed_blob(fake_github: FakeGitHub) -> None:
    fake_github.add_workflow_run(REPO, 3, logs_zip=b"PK-zip-bytes")
    with api(fake_github) as c:
        r = c.get(f"/repos/{REPO}/actions/runs/3/logs")
        assert r.status_code == 302 and "/_blobs/" in r.headers["location"]
        assert c.get(r.headers["location"]).status_code == 400  # credentials refused
        assert httpx.get(r.headers["location"]).content == b"PK-zip-bytes"
        assert httpx.get(r.headers["location"]).status_code == 404  # short-lived: used once


def test_duplicate_pull_is_422_and_writes_recorded(fake_github: FakeGitHub) -> None:
    fake_github.add_repo(REPO)
    body = {"head": "fix", "base": "main", "title": "t", "draft": True}
    with api(fake_github) as c:
        assert c.post(f"/repos/{REPO}/pulls", json=body).status_code == 201
        dup = c.post(f"/repos/{REPO}/pulls", json=body)
        assert dup.status_code == 422 and "already exists" in dup.text
        assert c.get(f"/repos/{REPO}/pulls", params={"head": "o:fix"}).json()[0]["draft"] is True
    assert [(w.method, w.status) for w in fake_github.writes] == [("POST", 201), ("POST", 422)]
    assert fake_github.writes[0].json == body


def test_issue_close_and_reopen(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(REPO, 5)
    with api(fake_github) as c:
        closed = c.patch(f"/repos/{REPO}/issues/5", json={"state": "closed", "state_reason": "not_planned"})
        assert closed.json()["state_reason"] == "not_planned" and closed.json()["closed_at"]
        assert c.patch(f"/repos/{REPO}/issues/5", json={"state_reason": "bogus"}).status_code == 422


def test_subprocess_mode_with_seed_file(tmp_path) -> None:
    logs = tmp_path / "logs.zip"
    logs.write_bytes(b"zip")
    seed = {
        "issues": [{"repo": REPO, "number": 1, "title": "seeded", "labels": ["scrub"]}],
        "comments": [{"repo": REPO, "number": 1, "body": "repro here", "user": "alice"}],
        "collaborators": [{"repo": REPO, "login": "alice"}],
        "workflow_runs": [{"repo": REPO, "run_id": 9, "logs_zip_path": str(logs),
                           "jobs": [{"name": "test", "conclusion": "failure"}]}],
    }
    state = tmp_path / "seed.json"
    state.write_text(json.dumps(seed))
    proc = subprocess.Popen([sys.executable, "-m", "tests.fakes.fake_github", "--state", str(state)],
                            stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()  # type: ignore[union-attr]
        with httpx.Client(base_url=url, headers={"Authorization": "token x"}) as c:
            assert c.get(f"/repos/{REPO}/issues/1").json()["title"] == "seeded"
            assert c.get(f"/repos/{REPO}/collaborators/alice").status_code == 204
            assert c.get(f"/repos/{REPO}/actions/runs/9/jobs").json()["total_count"] == 1
            c.post(f"/repos/{REPO}/issues/1/comments", json={"body": "hi"})
            writes = c.get("/_fake/writes").json()
        assert writes == [{"method": "POST", "path": f"/repos/{REPO}/issues/1/comments",
                           "json": {"body": "hi"}, "status": 201}]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_state_is_usable_without_a_server() -> None:
    state = FakeGitHubState()
    issue = state.add_issue(REPO, title="x")
    assert issue["number"] == 1 and state.add_pull(REPO, "b")["number"] == 2
    assert state.add_comment(REPO, 1, "c")["id"] != state.add_comment(REPO, 1, "d")["id"]


def test_fake_emits_only_real_rest_fields() -> None:
    """Every key the fake serves is a field of GitHub's schema (as githubkit knows it)."""
    from githubkit_schemas.latest import models as m

    def fields(model: type) -> set[str]:
        return {f.alias or name for name, f in model.model_fields.items()}

    state = FakeGitHubState()
    issue = state.add_issue(REPO, 1, labels=["bug"])
    comment = state.add_comment(REPO, 1, "hi")
    run = state.add_workflow_run(REPO, 2, jobs=[{"name": "test"}])
    job = state.get_repo(REPO).jobs[(2, 1)][0]  # type: ignore[union-attr]
    pull = state.add_pull(REPO, "fix")
    for obj, model in [(issue, m.Issue), (comment, m.IssueComment), (run, m.WorkflowRun),
                       (job, m.Job), (pull, m.PullRequest), (issue["user"], m.SimpleUser),
                       (issue["labels"][0], m.Label)]:
        assert set(obj) <= fields(model), (model.__name__, set(obj) - fields(model))
