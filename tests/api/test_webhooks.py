"""`POST /webhooks/github` with GitHub's own example payloads, signed as GitHub signs them."""

from __future__ import annotations

import copy
import json

import pytest
from sqlmodel import select

from app.db.models import Delivery, Run
from app.github.webhooks import event_key
from tests.foundation import SECRET, deliver, label_applied, load_payload, webhook_headers


def labeled_with(fixtures, label: str) -> dict:
    payload = load_payload(fixtures, "issues/labeled.payload.json")
    payload["label"]["name"] = label
    return label_applied(payload)


def failed_workflow_run(fixtures) -> dict:
    payload = load_payload(fixtures, "workflow_run/completed.payload.json")
    payload["workflow_run"]["conclusion"] = "failure"  # upstream has no failure example
    return payload


def runs(database) -> list[Run]:
    with database.session() as session:
        return list(session.exec(select(Run)))


def test_every_example_payload_is_answered_2xx(client, webhook_fixtures, database):
    files = sorted(webhook_fixtures.rglob("*.json"))
    assert len(files) == 273
    refused = {}
    for path in files:
        event = path.relative_to(webhook_fixtures).parts[0]
        response = deliver(client, event, path.read_bytes())
        if not 200 <= response.status_code < 300:
            refused[str(path.relative_to(webhook_fixtures))] = (response.status_code, response.text)
    assert refused == {}
    # Variants of one example (`created` and `created.with-installation`) are the same comment or
    # workflow run attempt: recorded once (`event_key`), like a replay under a new delivery id.
    keys = [event_key(p.relative_to(webhook_fixtures).parts[0], json.loads(p.read_bytes())) for p in files]
    expected = sum(1 for k in keys if k is None) + len({k for k in keys if k is not None})
    with database.session() as session:
        assert len(list(session.exec(select(Delivery)))) == expected and 250 < expected < 273


def test_missing_or_bad_signature_is_401(client, webhook_fixtures, enqueuer):
    body = (webhook_fixtures / "ping/payload.json").read_bytes()
    headers = webhook_headers("ping", body)
    assert client.post("/webhooks/github", content=body, headers={**headers, "X-Hub-Signature-256": ""}).status_code == 401
    unsigned = {k: v for k, v in headers.items() if k != "X-Hub-Signature-256"}
    assert client.post("/webhooks/github", content=body, headers=unsigned).status_code == 401
    wrong = webhook_headers("ping", body, secret="another-secret")
    assert client.post("/webhooks/github", content=body, headers=wrong).status_code == 401
    tampered = body.replace(b"Codertocat", b"Mallory") if b"Codertocat" in body else body + b" "
    assert client.post("/webhooks/github", content=tampered, headers=headers).status_code == 401
    assert enqueuer.runs == [] and enqueuer.comments == []


def test_malformed_json_is_400(client):
    assert deliver(client, "issues", b'{"action": "labeled",').status_code == 400
    assert deliver(client, "issues", b'["not", "an", "object"]').status_code == 400


def test_refused_until_a_secret_is_configured(settings, database, enqueuer, webhook_fixtures):
    from fastapi.testclient import TestClient

    from app.api import create_app

    settings.webhook_secret = ""
    with TestClient(create_app(settings, enqueuer=enqueuer)) as unconfigured:
        response = deliver(unconfigured, "ping", (webhook_fixtures / "ping/payload.json").read_bytes())
    assert response.status_code == 503
    assert "SCRUB_WEBHOOK_SECRET" in response.json()["detail"]


def test_ping_is_answered(client, webhook_fixtures):
    response = deliver(client, "ping", load_payload(webhook_fixtures, "ping/with-app_id.payload.json"))
    assert response.status_code == 200 and response.json()["status"] == "pong"


def test_trigger_label_starts_one_issue_run(client, webhook_fixtures, database, enqueuer):
    response = deliver(client, "issues", labeled_with(webhook_fixtures, "scrub"))
    assert response.status_code == 202
    [run] = runs(database)
    assert (run.kind, run.repo, run.issue, run.trigger, run.status) == ("issue", "Codertocat/Hello-World", 1, "label", "queued")
    assert run.target == "https://github.com/Codertocat/Hello-World/issues/1"
    assert run.params["issue"] == 1 and run.params["author_association"] == "OWNER"
    assert enqueuer.runs == [(run.id, "default")]
    assert response.json() == {"status": "queued", "run_id": run.id}


def test_other_labels_are_ignored(client, webhook_fixtures, database, enqueuer):
    response = deliver(client, "issues", load_payload(webhook_fixtures, "issues/labeled.payload.json"))
    assert response.status_code == 200 and response.json()["status"] == "ignored"
    assert runs(database) == [] and enqueuer.runs == []


def test_redelivery_is_acknowledged_and_ignored(client, webhook_fixtures, database, enqueuer):
    payload = labeled_with(webhook_fixtures, "scrub")
    first = deliver(client, "issues", payload, delivery="d-1")
    again = deliver(client, "issues", payload, delivery="d-1")
    assert first.status_code == 202
    assert again.status_code == 200 and again.json() == {"status": "duplicate"}
    assert len(runs(database)) == 1 and len(enqueuer.runs) == 1


def test_no_second_active_run_for_the_same_issue(client, webhook_fixtures, database, enqueuer):
    deliver(client, "issues", labeled_with(webhook_fixtures, "scrub"))
    second = deliver(client, "issues", labeled_with(webhook_fixtures, "scrub"))
    assert second.status_code == 200 and "already queued" in second.json()["reason"]
    assert len(runs(database)) == 1 and len(enqueuer.runs) == 1
    with database.session() as session:
        outcomes = sorted(d.outcome for d in session.exec(select(Delivery)))
    assert outcomes[0].startswith("ignored: run 1 is already queued")


def test_a_configured_trigger_label_is_used(settings, client, webhook_fixtures, database):
    settings.trigger_label = "needs-repro"
    assert deliver(client, "issues", labeled_with(webhook_fixtures, "scrub")).status_code == 200
    assert deliver(client, "issues", labeled_with(webhook_fixtures, "needs-repro")).status_code == 202


def test_failed_workflow_run_starts_ci_ingest(client, webhook_fixtures, database, enqueuer):
    payload = failed_workflow_run(webhook_fixtures)
    assert deliver(client, "workflow_run", payload).status_code == 202
    [run] = runs(database)
    workflow_run = payload["workflow_run"]
    assert (run.kind, run.trigger, run.issue, run.target) == ("ci_ingest", "workflow_run", None, workflow_run["html_url"])
    assert run.params["workflow_run_id"] == workflow_run["id"]
    assert run.params["head_sha"] == workflow_run["head_sha"] and run.params["run_attempt"] == workflow_run["run_attempt"]
    assert enqueuer.runs == [(run.id, "default")]


def test_successful_workflow_run_is_ignored(client, webhook_fixtures, database):
    response = deliver(client, "workflow_run", load_payload(webhook_fixtures, "workflow_run/completed.payload.json"))
    assert response.status_code == 200 and runs(database) == []


def test_a_rerun_that_passed_is_ingested_and_a_runs_origin_travels_with_it(client, webhook_fixtures, database):
    payload = copy.deepcopy(load_payload(webhook_fixtures, "workflow_run/completed.with-pull-requests.payload.json"))
    payload["workflow_run"]["run_attempt"] = 2  # conclusion success: attempt 1 failed, the rerun passed
    assert deliver(client, "workflow_run", payload).status_code == 202
    [run] = runs(database)
    assert run.params["conclusion"] == "success" and run.params["run_attempt"] == 2
    assert run.params["head_repository"] == "octo-org/octo-repo" and run.params["default_branch"] == "master"
    assert run.params["pull_requests"] == [2] and run.params["event"] == "repository_dispatch"
    fork = failed_workflow_run(webhook_fixtures)
    fork["workflow_run"]["head_repository"]["full_name"] = "mallory/octo-repo"
    fork["workflow_run"]["id"] += 1
    assert deliver(client, "workflow_run", fork).status_code == 202
    assert runs(database)[-1].params["head_repository"] == "mallory/octo-repo"


def test_dispatch_of_the_scrub_workflow_starts_an_improve_run(client, webhook_fixtures, database, enqueuer):
    payload = load_payload(webhook_fixtures, "workflow_dispatch/payload.json")
    assert deliver(client, "workflow_dispatch", payload).status_code == 200  # another workflow
    payload = copy.deepcopy(payload)
    payload["workflow"] = ".github/workflows/scrub-dispatch.yml"
    payload["inputs"] = {"deterministic": "true", "url": "https://github.com/octo-org/octo-repo/actions/runs/1"}
    assert deliver(client, "workflow_dispatch", payload).status_code == 202
    [run] = runs(database)
    assert (run.kind, run.trigger, run.target) == ("improve", "dispatch", payload["inputs"]["url"])
    assert run.params["deterministic"] == "true" and run.params["ref"] == "refs/heads/master"


def test_scrub_comment_enqueues_the_command_for_the_worker(client, webhook_fixtures, database, enqueuer):
    payload = load_payload(webhook_fixtures, "issue_comment/created.with-installation.payload.json")
    payload["comment"]["body"] = "/scrub approve\nplease"
    assert deliver(client, "issue_comment", payload).status_code == 202
    [command] = enqueuer.comments
    assert command["command"] == "approve" and command["issue"] == payload["issue"]["number"]
    assert command["user"] == payload["comment"]["user"]["login"]
    assert command["installation_id"] == payload["installation"]["id"]
    assert runs(database) == []  # the collaborator check happens in the worker


def test_plain_comments_and_unknown_subcommands(client, webhook_fixtures, enqueuer):
    payload = load_payload(webhook_fixtures, "issue_comment/created.payload.json")
    assert deliver(client, "issue_comment", payload).status_code == 200
    payload["comment"]["body"] = "/scrub frobnicate"
    payload["comment"]["id"] += 1  # another comment
    assert deliver(client, "issue_comment", payload).status_code == 202
    # enqueued as typed: the worker resolves the word through the run kinds (unknown: the help reply)
    assert [c["command"] for c in enqueuer.comments] == ["frobnicate"]


def test_sparse_payloads_never_fail(client):
    for event, payload in [
        ("issues", {"action": "labeled"}),
        ("issues", {"action": "labeled", "label": None, "issue": "x"}),
        ("issue_comment", {"action": "created", "comment": {"body": "/scrub retry"}}),
        ("workflow_run", {"action": "completed", "workflow_run": {"conclusion": "failure"}}),
        ("workflow_dispatch", {"workflow": "scrub-dispatch.yml", "inputs": None}),
        ("unknown_event", {}),
    ]:
        response = deliver(client, event, json.dumps(payload).encode())
        assert response.status_code == 200, (event, payload, response.text)


def test_enqueue_failure_is_recorded_not_a_500(client, webhook_fixtures, database, enqueuer):
    def broken(*args, **kwargs):
        raise ConnectionError("broker down")

    enqueuer.run_pipeline = broken
    response = deliver(client, "issues", labeled_with(webhook_fixtures, "scrub"))
    assert response.status_code == 202 and response.json()["status"] == "not_queued"
    [run] = runs(database)
    assert run.status == "failed" and "broker down" in run.error


def test_a_comment_replayed_under_a_new_delivery_id_is_a_duplicate(client, webhook_fixtures, database, enqueuer):
    """A signed delivery captured once (a proxy's log) and sent again with a fresh
    X-GitHub-Delivery: the command is the same comment, so it is not run twice."""
    payload = load_payload(webhook_fixtures, "issue_comment/created.with-installation.payload.json")
    payload["comment"]["body"] = "/scrub retry"
    assert deliver(client, "issue_comment", payload, delivery="c-1").status_code == 202
    replay = deliver(client, "issue_comment", payload, delivery="c-2")
    assert replay.status_code == 200 and replay.json() == {"status": "duplicate"}
    assert len(enqueuer.comments) == 1
    payload["comment"]["id"] += 1  # a new comment with the same words is a new command
    assert deliver(client, "issue_comment", payload, delivery="c-3").status_code == 202
    assert len(enqueuer.comments) == 2


def test_a_workflow_run_replayed_under_a_new_delivery_id_is_counted_once(client, webhook_fixtures, database, enqueuer):
    payload = failed_workflow_run(webhook_fixtures)
    assert deliver(client, "workflow_run", payload, delivery="w-1").status_code == 202
    assert deliver(client, "workflow_run", payload, delivery="w-2").json() == {"status": "duplicate"}
    assert len(runs(database)) == 1 and len(enqueuer.runs) == 1
    payload["workflow_run"]["run_attempt"] += 1  # GitHub's re-run of the jobs: a new attempt
    assert deliver(client, "workflow_run", payload, delivery="w-3").status_code == 202


@pytest.mark.services
def test_recording_and_redelivery_on_postgres(postgres_url, webhook_fixtures, enqueuer):
    from fastapi.testclient import TestClient

    from app.api import create_app
    from app.db.migrate import upgrade
    from app.db.session import Database
    from app.settings import Settings

    upgrade(postgres_url)
    settings = Settings(webhook_secret=SECRET, database_url=postgres_url)
    with TestClient(create_app(settings, enqueuer=enqueuer)) as pg_client:
        payload = labeled_with(webhook_fixtures, "scrub")
        first = deliver(pg_client, "issues", payload, delivery="pg-1")
        assert first.status_code == 202, first.text
        assert deliver(pg_client, "issues", payload, delivery="pg-1").json() == {"status": "duplicate"}
        comment = load_payload(webhook_fixtures, "issue_comment/created.payload.json")
        comment["comment"]["body"] = "/scrub retry"
        assert deliver(pg_client, "issue_comment", comment, delivery="pg-c1").status_code == 202
        assert deliver(pg_client, "issue_comment", comment, delivery="pg-c2").json() == {"status": "duplicate"}
        assert deliver(pg_client, "ping", load_payload(webhook_fixtures, "ping/payload.json")).status_code == 200
    database = Database(postgres_url)
    assert len(runs(database)) == 1 and len(enqueuer.runs) == 1
    database.dispose()


def test_enqueue_failure_message_carries_no_broker_password(client, webhook_fixtures, database, enqueuer):
    def broken(*args, **kwargs):
        raise ConnectionError("cannot reach redis://:hunter2-broker-pw@redis:6379/0")

    enqueuer.run_pipeline = broken
    response = deliver(client, "issues", labeled_with(webhook_fixtures, "scrub"))
    [run] = runs(database)
    assert "hunter2-broker-pw" not in response.text and "hunter2-broker-pw" not in run.error
    assert "cannot reach redis://" in run.error


@pytest.mark.services
def test_numbers_no_github_issue_has_are_ignored_not_a_503_on_postgres(postgres_url, webhook_fixtures, enqueuer):
    """#21 (trustweb's open end): a signed labeled event whose issue number is 2**31..2**63-1
    reached the insert, and Postgres's 32-bit `run.issue` made the webhook answer 503. Such a
    number is no issue's: ignored, with the reason, on every database."""
    from fastapi.testclient import TestClient

    from app.api import create_app
    from app.db.migrate import upgrade
    from app.db.session import Database
    from app.settings import Settings

    upgrade(postgres_url)
    settings = Settings(webhook_secret=SECRET, database_url=postgres_url)
    answers = {}
    with TestClient(create_app(settings, enqueuer=enqueuer), raise_server_exceptions=False) as pg_client:
        for field, value in [("issue", 2**31), ("issue", 2**40), ("issue", 2**63 - 1), ("issue", 0),
                             ("issue", -5)]:
            payload = labeled_with(webhook_fixtures, "scrub")
            payload[field]["number" if field == "issue" else "id"] = value
            answers[(field, value)] = deliver(pg_client, "issues", payload).status_code
        # An installation id out of range is read as none given (the run is stored, not a 503).
        foreign = labeled_with(webhook_fixtures, "scrub")
        foreign["installation"], foreign["issue"]["number"] = {"id": 2**40}, 7
        answers["installation"] = deliver(pg_client, "issues", foreign).status_code
        largest = labeled_with(webhook_fixtures, "scrub")
        largest["issue"]["number"] = 2**31 - 1
        answers["largest"] = deliver(pg_client, "issues", largest).status_code
    assert (answers.pop("installation"), answers.pop("largest")) == (202, 202)
    assert set(answers.values()) == {200}, answers
    database = Database(postgres_url)
    assert sorted((run.issue, run.installation_id) for run in runs(database)) == [(7, None), (2**31 - 1, None)]
    database.dispose()
