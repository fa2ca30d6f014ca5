"""Local mode (no GitHub login) no longer trusts whoever reaches the port (#21, finding 6).

A real `scrub serve` on 127.0.0.1 with its worker, the fake GitHub over HTTP, a run of a private
repository waiting for approval (its repro has a security finding). The attackers:

- a page on evil.example whose DNS name now resolves to 127.0.0.1 (DNS rebinding): its requests
  carry `Host: evil.example:<port>`;
- another account on the same machine (a shared ML box): it reaches 127.0.0.1, it has no token.

On the code before this change the rebound page read every run (200, private repository
included), and the other account's anonymous `POST /api/v1/runs/{id}/approve` answered 202 and
ran the code. Now only the holder of the token `scrub serve` printed (its sign-in URL) may act
or read a private repository's runs, and only loopback names (or the public URL) are answered.
"""

from __future__ import annotations

import re

import httpx
import pytest

from tests.reliability.lease_harness import UNTRUSTED_BODY, labeled_payload, post_webhook, wait_for
from tests.reliability.trust_harness import serve, stop

pytestmark = pytest.mark.services
SECRET = "local-mode-secret"
REPO = "Codertocat/Hello-World"  # the example payloads' repository, private here


@pytest.fixture
def server(tmp_path, fake_github):
    fake_github.set_private(REPO)
    fake_github.add_collaborator(REPO, "Codertocat", "triage")  # labels the issue (the payload's sender)
    fake_github.add_issue(REPO, 1, title="bug", body=UNTRUSTED_BODY, user="stranger")  # os.system: a finding
    served = serve(tmp_path, fake_github.url, webhook_secret=SECRET)
    try:
        yield served
    finally:
        stop(served)


def test_only_the_holder_of_the_printed_token_may_act_or_read_a_private_run(server):
    operator, stranger = server.operator(), server.stranger()
    run_id = post_webhook(server.base, SECRET, "issues", labeled_payload(REPO, 1)).json()["run_id"]

    def run() -> dict:
        return operator.get(f"/api/v1/runs/{run_id}").json()

    wait_for("the run to wait for approval", lambda: run()["status"] == "awaiting_approval", server.log)
    waiting = run()

    # DNS rebinding: the same socket, another name. Nothing is read, nothing is done.
    rebound = {"Host": f"evil.example:{server.port}", "Origin": f"http://evil.example:{server.port}"}
    for path in ("/api/v1/runs", f"/api/v1/runs/{run_id}", "/", f"/runs/{run_id}", "/metrics"):
        answer = stranger.get(path, headers=rebound)
        assert answer.status_code == 400 and REPO not in answer.text, (path, answer.status_code)
    assert stranger.post(f"/api/v1/runs/{run_id}/approve", headers=rebound).status_code == 400

    # Another account on this machine: no token, so no action and no private run.
    for action in ("approve", "retry", "cancel", "reject"):
        assert stranger.post(f"/api/v1/runs/{run_id}/{action}").status_code == 401, action
    assert stranger.post(f"/api/v1/runs/{run_id}/approve", headers={"Authorization": "Bearer guess"}).status_code == 401
    hidden, missing = stranger.get(f"/api/v1/runs/{run_id}"), stranger.get(f"/api/v1/runs/{run_id + 1000}")
    assert hidden.status_code == missing.status_code == 404
    assert stranger.get("/api/v1/runs").json() == [] and REPO not in stranger.get("/").text
    assert run() == waiting  # untouched: still waiting, no stage ran, nobody approved

    # The operator opens the printed URL: signed in, the page's Approve works (CSRF-checked).
    browser = server.browser()
    page = browser.get(f"/runs/{run_id}").text
    assert "signed in with the token" in page and REPO in page
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    action = re.search(r'<form class="approve" method="post" action="([^"]+)"', page).group(1).replace("&amp;", "&")
    assert "sha256=" in action  # the approval names the code shown
    approved = browser.post(action, data={"csrf_token": token}, headers={"Origin": server.base}, follow_redirects=False)
    assert approved.status_code == 303, approved.text
    wait_for("the approved run to go on", lambda: run()["status"] != "awaiting_approval", server.log)
    assert run()["params"]["approved_by"].endswith("(local mode)")


    # The token was printed once; the access log masks the sign-in request's query; a wrong one fails.
    token = server.token()
    assert "/login?token=***" in server.log.read_text() and server.log.read_text().count(token) == 1
    assert httpx.get(server.sign_in_url().replace(token, "not-the-token"), follow_redirects=False).status_code == 403
