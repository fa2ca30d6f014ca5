"""GitHub does the write and answers 502: through a real `scrub serve`, still one comment.

The fake GitHub creates the issue comment, then answers 502 (a proxy that lost the answer).
The client must not resend the POST; the Celery task retries the run, the publish stage's
upsert finds the comment by its marker and edits it.
"""

from __future__ import annotations

import json

from tests.conftest import WEBHOOK_FIXTURES

FENCE = "```"


def _labeled(repo: str, number: int) -> dict:
    payload = json.loads((WEBHOOK_FIXTURES / "issues" / "labeled.payload.json").read_text())
    payload["label"]["name"] = "scrub"
    payload["issue"]["number"] = number
    payload["issue"]["html_url"] = f"https://github.com/{repo}/issues/{number}"
    payload["repository"]["full_name"] = repo
    return payload


def test_a_comment_answered_502_after_it_was_written_is_not_duplicated(fake_github, serve):
    repo = "Codertocat/Hello-World"
    fake_github.add_collaborator(repo, "Codertocat")
    body = (f"{FENCE}python\nraise RuntimeError('expected scalar type Float but found Double')\n{FENCE}\n\n"
            f"{FENCE}\nRuntimeError: expected scalar type Float but found Double\n{FENCE}")
    number = fake_github.add_issue(repo, 1, title="dtype bug", body=body, user="Codertocat")["number"]
    fake_github.inject_failure("POST", f"/issues/{number}/comments", status=502, after_write=True)

    answer = serve.post_webhook("issues", _labeled(repo, number))
    assert answer.status_code == 202, answer.text
    run = serve.wait_for_run(answer.json()["run_id"], until={"succeeded", "failed"})
    assert run["status"] == "succeeded", run

    comments = fake_github.comments(repo, number)
    posts = fake_github.writes_to("POST", f"/issues/{number}/comments")
    assert len(posts) == 1, posts  # the transport did not resend it
    assert len(comments) == 1, [c["body"][:80] for c in comments]
    assert comments[0]["body"].startswith("This issue still reproduces")
    assert f"<!-- scrubbot:run={run['id']}:issue -->" in comments[0]["body"]
