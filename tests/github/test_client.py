"""GitHubClient against the fake GitHub over real HTTP, in token mode and App mode."""

from __future__ import annotations

import io
import zipfile

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from app.github.auth import read_private_key, web_host
from app.github.client import GitHubAPIError, GitHubClient
from app.github.port import GitHubPort, comment_marker
from app.settings import Settings
from tests.fakes.fake_github import FakeGitHub

REPO = "pytorch/pytorch"


@pytest.fixture
def client(fake_github: FakeGitHub) -> GitHubClient:
    return GitHubClient(token="ghp_test", base_url=fake_github.url)


@pytest.fixture(scope="module")
def rsa_keys() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return private, public


def make_zip(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buf.getvalue()


def test_client_satisfies_port(client: GitHubClient) -> None:
    port: GitHubPort = client
    assert port is client
    assert "ghp_test" not in repr(client) and "ghp_test" not in repr(client.auth)


def test_get_issue_and_paginated_comments(fake_github: FakeGitHub, client: GitHubClient) -> None:
    fake_github.add_issue(REPO, 7, title="crash in conv", body="```python\nimport torch\n```",
                          labels=["scrub"], author_association="CONTRIBUTOR")
    for i in range(130):  # two pages of 100
        fake_github.add_comment(REPO, 7, f"comment {i}", user=f"user{i % 3}")
    issue = client.get_issue(REPO, 7)
    assert issue["title"] == "crash in conv" and issue["labels"][0]["name"] == "scrub"
    assert issue["user"]["login"] == "octocat" and issue["author_association"] == "CONTRIBUTOR"
    comments = client.list_issue_comments(REPO, 7)
    assert [c["body"] for c in comments] == [f"comment {i}" for i in range(130)]
    pages = [r for r in fake_github.requests if r.path.endswith("/issues/7/comments")]
    assert len(pages) == 2  # the second one came from the Link header


def test_unknown_issue_raises_404(client: GitHubClient, fake_github: FakeGitHub) -> None:
    fake_github.add_repo(REPO)
    with pytest.raises(GitHubAPIError) as info:
        client.get_issue(REPO, 404)
    assert info.value.status == 404 and "ghp_test" not in str(info.value)


def test_upsert_comment_edits_instead_of_duplicating(fake_github: FakeGitHub, client: GitHubClient) -> None:
    fake_github.add_issue(REPO, 1)
    marker = comment_marker(12, "result")
    fake_github.add_comment(REPO, 1, f"I quote your marker {marker}", user="mallory")
    first = client.upsert_comment(REPO, 1, marker, "This issue still reproduces on PyTorch 2.5.")
    second = client.upsert_comment(REPO, 1, marker, "This issue no longer reproduces on PyTorch 2.6.")
    assert first["id"] == second["id"]
    ours = [c for c in fake_github.comments(REPO, 1) if c["user"]["login"] == "scrubbot-user"]
    assert len(ours) == 1 and ours[0]["body"].startswith("This issue no longer reproduces")
    assert marker in ours[0]["body"]
    assert len(fake_github.writes_to("POST", "/comments")) == 1
    assert len(fake_github.writes_to("PATCH", "/issues/comments/")) == 1
    # Same body again: nothing is written.
    client.upsert_comment(REPO, 1, marker, "This issue no longer reproduces on PyTorch 2.6.")
    assert len(fake_github.writes) == 2


def test_update_labels_adds_in_one_call_and_removes_present(fake_github: FakeGitHub, client: GitHubClient) -> None:
    fake_github.add_issue(REPO, 3, labels=["scrub", "needs-repro"])
    client.update_labels(REPO, 3, add=["reproduced", "module: nn"], remove=["needs-repro", "absent"])
    assert fake_github.label_names(REPO, 3) == ["scrub", "reproduced", "module: nn"]
    adds = fake_github.writes_to("POST", "/labels")
    assert len(adds) == 1 and adds[0].json == {"labels": ["reproduced", "module: nn"]}
    deletes = fake_github.writes_to("DELETE", "/labels/")
    assert [w.path for w in deletes] == [f"/repos/{REPO}/issues/3/labels/needs-repro"]
    client.update_labels(REPO, 3, add=[], remove=["module: nn"])
    assert fake_github.label_names(REPO, 3) == ["scrub", "reproduced"]


def test_remove_labels_with_awkward_names(fake_github: FakeGitHub, client: GitHubClient) -> None:
    awkward = ["why?", "c#d", "a/b", "x y", "ünï", "100%"]
    fake_github.add_issue(REPO, 8, labels=["keep", *awkward])
    client.update_labels(REPO, 8, add=[], remove=awkward)
    assert fake_github.label_names(REPO, 8) == ["keep"]


def test_close_issue_with_reason(fake_github: FakeGitHub, client: GitHubClient) -> None:
    fake_github.add_issue(REPO, 4)
    client.close_issue(REPO, 4, reason="completed")
    issue = fake_github.issue(REPO, 4)
    assert issue["state"] == "closed" and issue["state_reason"] == "completed"
    assert fake_github.writes[-1].json == {"state": "closed", "state_reason": "completed"}


def test_is_collaborator(fake_github: FakeGitHub, client: GitHubClient) -> None:
    fake_github.add_collaborator(REPO, "maintainer")
    assert client.is_collaborator(REPO, "maintainer") is True
    assert client.is_collaborator(REPO, "stranger") is False


def test_workflow_run_jobs_by_attempt(fake_github: FakeGitHub, client: GitHubClient) -> None:
    fake_github.add_workflow_run(REPO, 99, run_attempt=2, jobs={
        1: [{"name": "linux-test (1)", "conclusion": "failure"}],
        2: [{"name": f"shard {i}", "conclusion": "success"} for i in range(40)],
    })
    run = client.get_workflow_run(REPO, 99)
    assert run["id"] == 99 and run["run_attempt"] == 2 and run["conclusion"] == "failure"
    assert [j["name"] for j in client.list_run_jobs(REPO, 99, attempt=1)] == ["linux-test (1)"]
    latest = client.list_run_jobs(REPO, 99)
    assert len(latest) == 40 and {j["run_attempt"] for j in latest} == {2}


def test_download_run_logs_follows_redirect_and_streams(fake_github: FakeGitHub, client: GitHubClient, tmp_path) -> None:
    blob = make_zip({"0_build.txt": "ok\n", "1_test (1).txt": "FAILED test_ops.py::test_x\n" * 5000})
    older = make_zip({"0_build.txt": "attempt one\n"})
    fake_github.add_workflow_run(REPO, 5, run_attempt=2, logs_zip={1: older, 2: blob})
    dest = client.download_run_logs(REPO, 5, tmp_path / "logs" / "run5.zip")
    assert dest.read_bytes() == blob
    first = client.download_run_logs(REPO, 5, tmp_path / "a1.zip", attempt=1)
    assert first.read_bytes() == older
    blob_requests = [r for r in fake_github.requests if r.path.startswith("/_blobs/")]
    assert len(blob_requests) == 2 and all(r.auth == "none" for r in blob_requests)
    with pytest.raises(GitHubAPIError) as info:
        client.download_run_logs(REPO, 6, tmp_path / "missing.zip")
    assert info.value.status == 404


def test_upsert_pull_creates_draft_then_updates(fake_github: FakeGitHub, client: GitHubClient) -> None:
    fake_github.add_repo(REPO)
    pr = client.upsert_pull(REPO, "scrub/run-12", "main", "Add failing test", "first body")
    assert pr["draft"] is True and pr["head"]["ref"] == "scrub/run-12"
    again = client.upsert_pull(REPO, "scrub/run-12", "main", "Add failing test", "second body")
    assert again["number"] == pr["number"] and again["body"] == "second body"
    assert len(fake_github.pulls(REPO)) == 1
    creates = fake_github.writes_to("POST", "/pulls")
    assert len(creates) == 1 and creates[0].json["draft"] is True
    assert len(fake_github.writes_to("PATCH", "/pulls/")) == 1


def test_upsert_pull_recovers_from_lost_race(fake_github: FakeGitHub, client: GitHubClient, monkeypatch) -> None:
    fake_github.add_repo(REPO)
    calls = iter([None])  # first lookup misses (another worker creates the PR meanwhile)
    real = client._open_pull

    def racy(*args):
        if next(calls, "real") is None:
            fake_github.add_pull(REPO, "scrub/x", "main", title="t", body="b")
            return None
        return real(*args)

    monkeypatch.setattr(client, "_open_pull", racy)
    pr = client.upsert_pull(REPO, "scrub/x", "main", "t", "new body")
    assert pr["body"] == "new body" and len(fake_github.pulls(REPO)) == 1


def test_clone_url_token_and_override(fake_github: FakeGitHub, tmp_path) -> None:
    client = GitHubClient(token="ghp_secret", base_url="https://api.github.com",
                          clone_urls={"local/repo": tmp_path / "bare.git"})
    assert client.clone_url("o/r") == "https://x-access-token:ghp_secret@github.com/o/r.git"
    assert client.clone_url("Local/Repo") == (tmp_path / "bare.git").resolve().as_uri()
    assert "ghp_secret" not in repr(client)


def test_from_settings_token_mode(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(REPO, 2, title="from settings")
    settings = Settings(github_token="ghp_x", github_api_url=fake_github.url)
    assert GitHubClient.from_settings(settings).get_issue(REPO, 2)["title"] == "from settings"
    with pytest.raises(ValueError):
        GitHubClient.from_settings(Settings())


def test_bad_token_is_refused(rsa_keys) -> None:
    with FakeGitHub(token="right") as fake:
        fake.add_issue(REPO, 1)
        with pytest.raises(GitHubAPIError) as info:
            GitHubClient(token="wrong", base_url=fake.url).get_issue(REPO, 1)
        assert info.value.status == 401


def test_app_mode_jwt_then_installation_token(rsa_keys, tmp_path) -> None:
    private, public = rsa_keys
    with FakeGitHub(token="unused", app_id=4242, app_public_key=public) as fake:
        fake.add_repo(REPO, installation_id=77)
        fake.add_issue(REPO, 9, title="app mode")
        settings = Settings(github_app_id="4242", github_private_key=private, github_api_url=fake.url)
        client = GitHubClient.from_settings(settings)
        assert client.get_issue(REPO, 9)["title"] == "app mode"
        kinds = [(r.path, r.auth) for r in fake.requests]
        assert kinds[:3] == [(f"/repos/{REPO}/installation", "jwt"),
                             ("/app/installations/77/access_tokens", "jwt"),
                             (f"/repos/{REPO}/issues/9", "installation")]
        marker = comment_marker(1, "result")
        first = client.upsert_comment(REPO, 9, marker, "hello")
        second = client.upsert_comment(REPO, 9, marker, "hello again")
        assert first["id"] == second["id"] and first["user"]["login"] == "scrubbot[bot]"
        fake.add_workflow_run(REPO, 31, logs_zip=b"PK\x03\x04 app-mode")
        assert client.download_run_logs(REPO, 31, tmp_path / "l.zip").read_bytes() == b"PK\x03\x04 app-mode"
        # The token is minted once and reused; git gets an installation token too.
        assert sum(1 for r in fake.requests if r.path.endswith("/access_tokens")) == 1
        url = client.clone_url(REPO)
        token = url.split("x-access-token:")[1].split("@")[0]
        assert token in fake.installation_tokens and token not in repr(client)
        assert url.endswith(f"@127.0.0.1:{fake.port}/{REPO}.git")


def test_the_read_clone_url_reads_one_repository_and_writes_nothing(rsa_keys) -> None:
    """What a repro worker gets (the trust split): App mode, a fresh token narrowed to the one
    repository and `contents: read`; token mode, no credential at all."""
    private, public = rsa_keys
    with FakeGitHub(token="unused", app_id=4242, app_public_key=public) as fake:
        fake.add_repo(REPO, installation_id=77)
        fake.add_repo("octo/other", installation_id=77)
        fake.add_issue(REPO, 9, title="app mode")
        fake.add_issue("octo/other", 1, title="other")
        client = GitHubClient(app_id=4242, private_key=private, base_url=fake.url)
        url = client.read_clone_url(REPO)
        token = url.split("x-access-token:")[1].split("@")[0]
        assert url.endswith(f"@127.0.0.1:{fake.port}/{REPO}.git") and token not in repr(client)
        assert client.read_clone_url(REPO) != url  # minted for each job, never the cached one
        narrowed = GitHubClient(token=token, base_url=fake.url)
        assert narrowed.is_private(REPO) is False  # it reads the repository...
        for write in (lambda: narrowed.create_comment(REPO, 9, "written by a repro host"),
                      lambda: narrowed.close_issue(REPO, 9),
                      lambda: narrowed.upsert_pull(REPO, head="x", base="main", title="t", body="b")):
            with pytest.raises(GitHubAPIError) as refused:
                write()
            assert refused.value.status == 403  # ...and writes nothing
        with pytest.raises(GitHubAPIError) as hidden:
            narrowed.is_private("octo/other")
        assert hidden.value.status == 404  # nor sees another repository of the installation
        assert all(w.status == 403 for w in fake.writes)
    token_mode = GitHubClient(token="ghp_secret", base_url="https://api.github.com")
    assert token_mode.read_clone_url("o/r") == "https://github.com/o/r.git"


def test_app_mode_with_installation_id_and_wrong_key(rsa_keys) -> None:
    private, _ = rsa_keys
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()
    other_pem = other.public_bytes(serialization.Encoding.PEM,
                                   serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    with FakeGitHub(app_id=1, app_public_key=other_pem) as fake:
        fake.add_issue(REPO, 1)
        client = GitHubClient(app_id=1, private_key=private, installation_id=1, base_url=fake.url)
        with pytest.raises(GitHubAPIError) as info:
            client.get_issue(REPO, 1)
        assert info.value.status == 401 and not info.value.transient
        assert fake.requests[0].path == "/app/installations/1/access_tokens"


def test_private_key_forms_and_web_host(rsa_keys, tmp_path) -> None:
    private, _ = rsa_keys
    pem_file = tmp_path / "app.pem"
    pem_file.write_text(private)
    escaped = private.strip().replace("\n", "\\n")
    assert read_private_key(private) == read_private_key(escaped) == read_private_key(str(pem_file))
    with pytest.raises(ValueError):
        read_private_key("not a key")
    assert web_host("https://api.github.com") == ("https", "github.com")
    assert web_host("https://ghe.example.com/api/v3") == ("https", "ghe.example.com")


def test_server_errors_are_transient_and_retried(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(REPO, 1, title="flaky server")
    fake_github.inject_failure("GET", "/issues/1", status=502)
    no_retry = GitHubClient(token="t", base_url=fake_github.url, auto_retry=False)
    with pytest.raises(GitHubAPIError) as info:
        no_retry.get_issue(REPO, 1)
    assert info.value.status == 502 and info.value.transient
    fake_github.inject_failure("GET", "/issues/1", status=503)
    retrying = GitHubClient(token="t", base_url=fake_github.url)  # one retry after 1 s
    assert retrying.get_issue(REPO, 1)["title"] == "flaky server"


def test_a_comment_written_then_answered_502_is_not_posted_twice(fake_github: FakeGitHub) -> None:
    """GitHub may do a write and lose the answer. The client must not resend the POST; the
    caller's retry of the upsert finds the marker and edits: one comment."""
    fake_github.add_issue(REPO, 1, title="crash")
    fake_github.inject_failure("POST", "/issues/1/comments", status=502, after_write=True)
    client = GitHubClient(token="ghp_test", base_url=fake_github.url)
    marker = comment_marker(9, "issue")
    with pytest.raises(GitHubAPIError) as info:
        client.upsert_comment(REPO, 1, marker, "first try")
    assert info.value.status == 502 and info.value.transient
    assert len(fake_github.comments(REPO, 1)) == 1  # it was written, though the answer said 502
    client.upsert_comment(REPO, 1, marker, "second try")  # what the task's retry does
    comments = fake_github.comments(REPO, 1)
    assert len(comments) == 1 and comments[0]["body"].startswith("second try")
    assert len(fake_github.writes_to("POST", "/comments")) == 1


def test_a_pull_created_then_answered_502_is_not_opened_twice(fake_github: FakeGitHub) -> None:
    fake_github.add_repo(REPO)
    fake_github.inject_failure("POST", "/pulls", status=502, after_write=True)
    client = GitHubClient(token="ghp_test", base_url=fake_github.url)
    with pytest.raises(GitHubAPIError):
        client.upsert_pull(REPO, "scrub/abc", "main", "title", "body one")
    pr = client.upsert_pull(REPO, "scrub/abc", "main", "title", "body two")
    assert [p["number"] for p in fake_github.pulls(REPO)] == [pr["number"]]
    assert fake_github.pulls(REPO)[0]["body"] == "body two"
    assert len(fake_github.writes_to("POST", "/pulls")) == 1


def test_a_write_answered_5xx_is_sent_once(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(REPO, 1, title="x")
    fake_github.inject_failure("PATCH", "/issues/1", status=503)  # refused, not performed
    client = GitHubClient(token="ghp_test", base_url=fake_github.url)
    with pytest.raises(GitHubAPIError):
        client.close_issue(REPO, 1)
    assert [w.status for w in fake_github.writes_to("PATCH", "/issues/1")] == [503]  # sent once
    assert fake_github.issue(REPO, 1)["state"] == "open"
