"""`/scrub approve` from a collaborator who may only read (or triage): through a real `scrub serve`
(its own worker, the embedded defaults), the fake GitHub over HTTP for the permission checks.

A run whose repro has security-review findings waits for approval. Being a collaborator is not
enough to approve it: the commenter's role on the repository must be admin, maintain or write.
On the code before this change the read-only collaborator's comment approved the run and the
sandbox ran the repro.
"""

from __future__ import annotations

import json

import httpx

from tests.conftest import WEBHOOK_FIXTURES
from tests.reliability.lease_harness import UNTRUSTED_BODY, labeled_payload, post_webhook, scrub_env, start, stop_group, wait_for
from tests.services import free_port, wait_for_port

SECRET = "command-permission-secret"
REPO = "Codertocat/Hello-World"


def comment_payload(number: int, login: str, body: str) -> bytes:
    """`issue_comment.created` by `login` on `REPO#number` (the example payload, retargeted)."""
    payload = json.loads((WEBHOOK_FIXTURES / "issue_comment" / "created.payload.json").read_text())
    payload["comment"]["body"] = body
    payload["comment"]["user"]["login"] = payload["sender"]["login"] = login
    payload["issue"]["number"] = number
    payload["issue"]["html_url"] = f"https://github.com/{REPO}/issues/{number}"
    return json.dumps(payload).encode()


def replies_to(fake, number: int, login: str) -> list[str]:
    return [c["body"] for c in fake.comments(REPO, number) if c["body"].startswith(f"@{login} ")]


def test_a_read_only_collaborator_cannot_approve_a_run_with_findings(tmp_path, fake_github):
    fake_github.add_collaborator(REPO, "Codertocat", "triage")  # labels the issue (the payload's sender)
    fake_github.add_collaborator(REPO, "reed", "read")
    fake_github.add_collaborator(REPO, "wanda", "write")
    fake_github.add_issue(REPO, 1, title="bug", body=UNTRUSTED_BODY, user="stranger")  # os.system: a finding
    port, log = free_port(), tmp_path / "serve.log"
    base = f"http://127.0.0.1:{port}"
    env = scrub_env(tmp_path / "data", webhook_secret=SECRET, github_token="t", github_api_url=fake_github.url)
    serve = start(["serve", "--port", str(port), "-c", "1"], env, log)
    try:
        wait_for_port(port, serve)
        run_id = post_webhook(base, SECRET, "issues", labeled_payload(REPO, 1)).json()["run_id"]

        def run() -> dict:
            return httpx.get(f"{base}/api/v1/runs/{run_id}", timeout=30).json()

        wait_for("the run to wait for approval", lambda: run()["status"] == "awaiting_approval", log)

        # The attack: collaborators without write permission comment `/scrub approve`.
        for login in ("reed", "Codertocat"):
            answer = post_webhook(base, SECRET, "issue_comment", comment_payload(1, login, "/scrub approve"))
            assert answer.status_code == 202 and answer.json()["status"] == "queued", answer.text
        wait_for("both commands to be answered, or the run to go on",
                 lambda: run()["status"] != "awaiting_approval"
                 or (replies_to(fake_github, 1, "reed") and replies_to(fake_github, 1, "Codertocat")), log)

        after = run()
        assert after["status"] == "awaiting_approval", after
        assert "approved_by" not in after["params"]
        assert [s["stage"] for s in after["stages"]] == ["fetch", "select", "triage", "review"]  # nothing ran
        assert "needs write permission" in replies_to(fake_github, 1, "reed")[0]
        assert "`read`" in replies_to(fake_github, 1, "reed")[0]
        assert "`triage`" in replies_to(fake_github, 1, "Codertocat")[0]

        # The control: a writer's `/scrub approve` through the same path lets the run go on.
        post_webhook(base, SECRET, "issue_comment", comment_payload(1, "wanda", "/scrub approve"))
        wait_for("the writer's approval", lambda: run()["status"] != "awaiting_approval", log)
        assert run()["params"]["approved_by"] == "wanda" and replies_to(fake_github, 1, "wanda") == []
    finally:
        stop_group(serve)
