"""People and permissions through a real `scrub serve` (GitHub login on, its own worker), the
fake GitHub over HTTP for the OAuth flow and the permission checks, plain HTTP clients as the
browsers: a cross-origin form cannot approve, a signed-in non-writer cannot either, a writer can."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.reliability.lease_harness import UNTRUSTED_BODY, labeled_payload, post_webhook, scrub_env, start, stop_group, wait_for
from tests.services import free_port, wait_for_port

pytestmark = pytest.mark.services
SECRET = "access-secret"
REPO = "Codertocat/Hello-World"


@pytest.fixture
def site(tmp_path, fake_github):
    fake_github.oauth_client_id, fake_github.oauth_client_secret = "client-1", "oauth-secret"
    fake_github.add_collaborator(REPO, "wanda", "write")
    fake_github.add_collaborator(REPO, "reed", "read")
    fake_github.add_collaborator(REPO, "Codertocat", "triage")  # who labels (the example payload's sender)
    port, log = free_port(), tmp_path / "serve.log"
    base = f"http://127.0.0.1:{port}"
    env = scrub_env(tmp_path / "data", webhook_secret=SECRET, github_token="t", github_api_url=fake_github.url,
                    oauth_client_id="client-1", oauth_client_secret="oauth-secret", session_secret="k" * 40,
                    public_url=base)
    serve = start(["serve", "--port", str(port), "-c", "1"], env, log)
    try:
        wait_for_port(port, serve)
        yield base, log
    finally:
        stop_group(serve)


def browser_of(base: str, fake, login: str) -> httpx.Client:
    """A client that went through GitHub's sign-in as `login`."""
    fake.oauth_login = login
    client = httpx.Client(base_url=base, timeout=30)
    to_github = client.get("/login?next=/", follow_redirects=False)
    back = httpx.get(to_github.headers["location"], follow_redirects=False)
    assert back.headers["location"].startswith(f"{base}/auth/callback?")
    landed = client.get(back.headers["location"], follow_redirects=False)
    assert landed.status_code == 303, landed.text
    cookie = landed.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie  # plain http here
    return client


def token_on(client: httpx.Client, run_id: int) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', client.get(f"/runs/{run_id}").text).group(1)


def approve(client: httpx.Client, run_id: int, token: str, origin: str):
    return client.post(f"/api/v1/runs/{run_id}/approve?next=/runs/{run_id}", data={"csrf_token": token},
                       headers={"Origin": origin}, follow_redirects=False)


def test_only_a_writer_on_this_site_may_approve(site, fake_github):
    base, log = site
    fake_github.add_issue(REPO, 1, title="bug", body=UNTRUSTED_BODY, user="stranger")
    answer = post_webhook(base, SECRET, "issues", labeled_payload(REPO, 1))
    run_id = answer.json()["run_id"]
    status = lambda: httpx.get(f"{base}/api/v1/runs/{run_id}").json()["status"]  # noqa: E731  (public repo: anonymous read)
    wait_for("the run to wait for approval", lambda: status() == "awaiting_approval", log)

    anonymous = httpx.post(f"{base}/api/v1/runs/{run_id}/approve", headers={"Origin": base})
    assert anonymous.status_code == 401

    writer = browser_of(base, fake_github, "wanda")
    token = token_on(writer, run_id)
    # A form on another site, submitted by the writer's browser (cookie and all): refused.
    assert approve(writer, run_id, token, "https://evil.example").status_code == 403
    assert approve(writer, run_id, "", base).status_code == 403  # this site, but no token

    reader = browser_of(base, fake_github, "reed")
    assert approve(reader, run_id, token_on(reader, run_id), base).status_code == 403
    assert status() == "awaiting_approval"

    assert approve(writer, run_id, token, base).status_code == 303
    wait_for("the approved run to go on", lambda: status() != "awaiting_approval", log)
    run = httpx.get(f"{base}/api/v1/runs/{run_id}").json()
    assert run["params"]["approved_by"] == "wanda"


def test_behind_a_tls_proxy_the_cookie_is_secure(site, fake_github):
    base, _ = site
    answer = httpx.get(f"{base}/login", headers={"X-Forwarded-Proto": "https"})  # uvicorn trusts 127.0.0.1's proxy headers
    assert "Secure" in answer.headers["set-cookie"] and "HttpOnly" in answer.headers["set-cookie"]
