"""`event_key`: what a delivery is about, from GitHub's own ids in the real example payloads."""

from __future__ import annotations

import json

from app.github.webhooks import event_key
from tests.conftest import WEBHOOK_FIXTURES


def example(name: str) -> dict:
    return json.loads((WEBHOOK_FIXTURES / name).read_text())


def test_a_comment_is_keyed_by_its_id_action_author_and_words():
    created = example("issue_comment/created.payload.json")
    key = event_key("issue_comment", created)
    assert key.startswith(f"issue_comment.created:{created['comment']['id']}:") and len(key) < 200
    assert event_key("issue_comment", json.loads(json.dumps(created))) == key  # a replay: the same key
    edited = example("issue_comment/edited.payload.json")
    assert event_key("issue_comment", edited).startswith(f"issue_comment.edited:{edited['comment']['id']}:")
    created["comment"]["body"] = "/scrub retry"  # not what GitHub signed for this id: another comment
    assert event_key("issue_comment", created) != key


def test_a_workflow_run_is_keyed_by_its_id_and_attempt():
    payload = example("workflow_run/completed.payload.json")
    run = payload["workflow_run"]
    assert event_key("workflow_run", payload) == f"workflow_run.completed:{run['id']}:{run['run_attempt']}"
    run["run_attempt"] = None  # GitHub Enterprise versions without attempts
    assert event_key("workflow_run", payload) == f"workflow_run.completed:{run['id']}:1"


def test_events_without_an_id_of_their_own_have_no_key():
    """A label applied again is a new request; a ping, a push: nothing to replay into a command."""
    assert event_key("issues", example("issues/labeled.payload.json")) is None
    assert event_key("ping", example("ping/payload.json")) is None
    assert event_key("issue_comment", {"comment": {"id": "not a number"}}) is None
    assert event_key("workflow_run", {"workflow_run": []}) is None
