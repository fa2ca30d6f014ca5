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


def test_a_label_application_is_keyed_by_issue_label_and_moment():
    """A label has no id; applying it moves the issue's updated_at. The same bytes again are a
    replay (one key); another moment, label, issue or repository is another application."""
    payload = example("issues/labeled.payload.json")
    key = event_key("issues", payload)
    assert key and key.startswith("issues.labeled:") and key == event_key("issues", example("issues/labeled.payload.json"))
    for path, value in ((("issue", "updated_at"), "2026-01-01T00:00:01Z"), (("label", "name"), "scrub"),
                        (("issue", "number"), 2), (("repository", "full_name"), "someone/else")):
        changed = example("issues/labeled.payload.json")
        changed[path[0]][path[1]] = value
        assert event_key("issues", changed) not in (None, key), path
    undated = example("issues/labeled.payload.json")
    undated["issue"]["updated_at"] = None
    assert event_key("issues", undated) is None  # nothing tells two applications apart: each is new


def test_events_without_an_id_of_their_own_have_no_key():
    """A ping, a push: nothing to replay into a command."""
    assert event_key("ping", example("ping/payload.json")) is None
    assert event_key("issue_comment", {"comment": {"id": "not a number"}}) is None
    assert event_key("workflow_run", {"workflow_run": []}) is None
