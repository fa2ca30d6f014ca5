"""Cross-report dedup, end to end: two issues labelled `scrub` whose repros fail with the same
error, and a known CI failure with it, through the webhook, the worker's `execute_run`, the
sandbox, the fake GitHub and the database. The second issue's comment says "Same failure as
#1" and names the CI failure; both issues are linked on the signature pages."""

from __future__ import annotations

import json

from app.ci_history import Classification, Occurrence
from app.db.signature_history import issue_fingerprint
from app.db.signatures import DbSignatureStore
from app.engine.cilogs.archive import Failure
from app.github.client import GitHubClient
from app.pipelines.issue.dedup import sentence
from tests.conftest import WEBHOOK_FIXTURES
from tests.foundation import client, database, deliver, enqueuer, label_applied, run_to_the_end, settings  # noqa: F401
from workers.execute import WorkerServices

REPO = "Codertocat/Hello-World"
FENCE = "```"
ERROR = "RuntimeError: expected scalar type Float but found Double"


def _issue(fake, number: int, title: str) -> None:
    body = (f"{FENCE}python\nx = 1\nraise RuntimeError('expected scalar type Float but found Double')\n{FENCE}\n\n"
            f"{FENCE}\nTraceback (most recent call last):\n  File \"x.py\", line 2\n{ERROR}\n{FENCE}")
    fake.add_issue(REPO, number, title=title, body=body, user="Codertocat")


def _label(client, services, enqueuer, number: int) -> int:  # noqa: F811
    payload = json.loads((WEBHOOK_FIXTURES / "issues" / "labeled.payload.json").read_text())
    payload["label"]["name"] = "scrub"
    payload["issue"]["number"] = number
    payload["issue"]["html_url"] = f"https://github.com/{REPO}/issues/{number}"
    answer = deliver(client, "issues", label_applied(payload))
    assert answer.status_code == 202, answer.text
    run_id = answer.json()["run_id"]
    assert run_to_the_end(run_id, services, enqueuer) == "succeeded"  # repro stages: as a repro worker runs them
    return run_id


def _known_ci_failure(database) -> str:  # noqa: F811
    failure = Failure(job="tests (3.11)", test="test/test_ops.py::test_cast", kind="exception",
                      exception="RuntimeError", message="expected scalar type Float but found Double",
                      signature="c1" * 32)
    store = DbSignatureStore(database)
    store.observe(REPO, failure, 9001)
    store.record_occurrence(REPO, Occurrence(failure.signature, 9001, head_branch="main", event="push", head_repo=REPO,
                                             classification=Classification("trunk", True)), ERROR)
    return failure.signature


def test_the_second_issue_with_the_same_failure_says_so_and_both_are_linked(
        fake_github, client, database, enqueuer, settings):  # noqa: F811
    fake_github.add_collaborator(REPO, "Codertocat")
    services = WorkerServices(settings=settings, database=database, enqueuer=enqueuer,
                              github_for=lambda _: GitHubClient(token="t", base_url=fake_github.url))
    ci = _known_ci_failure(database)
    _issue(fake_github, 1, "dtype mismatch in matmul")
    _issue(fake_github, 2, "Float vs Double when casting")
    _label(client, services, enqueuer, 1)
    _label(client, services, enqueuer, 2)

    [first] = fake_github.comments(REPO, 1)
    [second] = fake_github.comments(REPO, 2)
    assert first["body"].startswith("This issue still reproduces") and "Same failure as #" not in first["body"]
    assert "Same failure as a known CI failure (failed in 1 workflow run)" in first["body"]
    assert "Same failure as #1." in second["body"] and "known CI failure" in second["body"]
    on_ci = client.get(f"/api/v1/signatures/{REPO}/{ci[:12]}").json()
    assert [(link["number"], link["relation"]) for link in on_ci["links"]] == [(1, "same failure"), (2, "same failure")]
    issues = client.get(f"/api/v1/signatures/{REPO}/{issue_fingerprint(REPO, ERROR)[:12]}").json()
    assert issues["source"] == "issue" and issues["error_key"] == ERROR
    assert [(link["number"], link["relation"]) for link in issues["links"]] == [(1, "reported"), (2, "reported")]


def test_a_closed_issue_is_not_called_the_same_failure(
        fake_github, client, database, enqueuer, settings):  # noqa: F811
    fake_github.add_collaborator(REPO, "Codertocat")
    services = WorkerServices(settings=settings, database=database, enqueuer=enqueuer,
                              github_for=lambda _: GitHubClient(token="t", base_url=fake_github.url))
    _issue(fake_github, 1, "dtype mismatch")
    _label(client, services, enqueuer, 1)
    fake_github.issue(REPO, 1)["state"] = "closed"
    _issue(fake_github, 2, "dtype mismatch again")
    _label(client, services, enqueuer, 2)
    [second] = fake_github.comments(REPO, 2)
    assert "Same failure" not in second["body"]


def test_the_sentence_names_issues_and_links_ci_signatures_on_the_status_page():
    found = [{"kind": "issue", "number": 12, "title": "x", "fingerprint": "a" * 64},
             {"kind": "issue", "number": 30, "title": "y", "fingerprint": "a" * 64},
             {"kind": "ci", "fingerprint": "b" * 64, "runs": 3}]
    text = sentence(found, "o/r", "https://scrub.example.org/")
    assert text == ("Same failure as #12 and #30. Same failure as a known CI failure (failed in 3 workflow runs): "
                    "https://scrub.example.org/signatures/o/r/bbbbbbbbbbbb.")
    assert "`bbbbbbbbbbbb`" in sentence(found[2:], "o/r")
    assert sentence([], "o/r") == ""
