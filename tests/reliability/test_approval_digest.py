"""An approval is of the code approved, not of the run (#21, finding 4).

Through a real `scrub serve` (its worker, the sandbox) and the fake GitHub over HTTP: repro A
(with a security finding) waits; a writer comments `/scrub approve`; A runs. The author then
edits the issue to repro B (another finding) and the run is retried. On the code before this
change the retry ran B as "approved by" the writer, unreviewed. Now the approval carries A's
SHA-256: B waits for an approval of its own, and the status page's Approve of a page that still
shows A's digest changes nothing.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import WEBHOOK_FIXTURES
from tests.reliability.lease_harness import FENCE, labeled_payload, post_webhook, wait_for
from tests.reliability.trust_harness import serve, stop

pytestmark = pytest.mark.services
SECRET = "approval-digest-secret"
REPO = "Codertocat/Hello-World"
OPERATOR = "operator-token-for-retries"
REPRO_A = f"{FENCE}python\nimport os\nos.system('echo A')\nraise RuntimeError('boom')\n{FENCE}\nRuntimeError: boom"
REPRO_B = (f"{FENCE}python\nimport os\nos.system('echo B > /tmp/owned')\nraise RuntimeError('boom')\n{FENCE}\n"
           "RuntimeError: boom")


def comment(login: str, body: str, comment_id: int) -> bytes:
    payload = json.loads((WEBHOOK_FIXTURES / "issue_comment" / "created.payload.json").read_text())
    payload["comment"].update(body=body, id=comment_id)
    payload["comment"]["user"]["login"] = payload["sender"]["login"] = login
    payload["issue"]["number"] = 1
    return json.dumps(payload).encode()


def test_a_retry_after_the_issue_was_edited_waits_for_a_new_approval(tmp_path, fake_github):
    fake_github.add_collaborator(REPO, "Codertocat", "triage")  # labels the issue
    fake_github.add_collaborator(REPO, "wanda", "write")
    fake_github.add_issue(REPO, 1, title="bug", body=REPRO_A, user="stranger")
    server = serve(tmp_path, fake_github.url, webhook_secret=SECRET, api_tokens=OPERATOR)
    try:
        api = server.stranger()
        api.headers["Authorization"] = f"Bearer {OPERATOR}"  # an operator's script (works before and after)

        def run() -> dict:
            return api.get(f"/api/v1/runs/{run_id}").json()

        run_id = post_webhook(server.base, SECRET, "issues", labeled_payload(REPO, 1)).json()["run_id"]
        wait_for("A to wait for approval", lambda: run()["status"] == "awaiting_approval", server.log)
        post_webhook(server.base, SECRET, "issue_comment", comment("wanda", "/scrub approve", 9001))
        wait_for("A, approved, to run to the end", lambda: run()["status"] == "succeeded", server.log, bound_s=300)
        approved = run()
        assert approved["params"]["approved_by"] == "wanda"
        digest_a = approved["params"].get("approved_sha256")
        assert "reproduce" in [s["stage"] for s in approved["stages"]]

        fake_github.issue(REPO, 1)["body"] = REPRO_B  # the author edits the issue
        assert api.post(f"/api/v1/runs/{run_id}/retry").status_code == 202
        wait_for("the retried run to stop somewhere", lambda: run()["status"] in ("awaiting_approval", "succeeded", "failed"),
                 server.log, bound_s=300)
        retried = run()
        assert retried["status"] == "awaiting_approval", retried["status"]
        assert [s["stage"] for s in retried["stages"]] == ["fetch", "select", "triage", "review"]  # B did not run
        review = retried["stages"][-1]
        assert "wanda approved other code" in review["summary"]
        assert digest_a and review["output"]["approval_sha256"] != digest_a

        # An Approve from a page still showing A (its digest in the form) approves nothing.
        stale = api.post(f"/api/v1/runs/{run_id}/approve?sha256={digest_a}")
        assert stale.status_code == 409 and run()["status"] == "awaiting_approval"
        # Approving what is shown now (B, by its digest) lets it run.
        fresh = api.post(f"/api/v1/runs/{run_id}/approve?sha256={review['output']['approval_sha256']}")
        assert fresh.status_code == 202
        wait_for("B, approved, to go on", lambda: run()["status"] != "awaiting_approval", server.log)
    finally:
        stop(server)
