"""The seal on a `/scrub` command between the API and the trusted worker."""

from __future__ import annotations

import json

from app.command_seal import seal, unsealed_reason

COMMAND = {"command": "approve", "repo": "o/r", "issue": 12, "user": "ann", "installation_id": None,
           "issue_url": "https://github.com/o/r/issues/12", "args": ""}


def test_a_sealed_command_passes_after_the_brokers_json_round_trip():
    given = seal("s3cret", COMMAND)
    carried = json.loads(json.dumps(COMMAND | {"seal": given}))  # what the worker's kwargs hold
    assert unsealed_reason("s3cret", {k: v for k, v in carried.items() if k != "seal"}, carried["seal"]) is None


def test_an_unsealed_altered_or_foreign_command_is_refused():
    given = seal("s3cret", COMMAND)
    assert "no seal" in unsealed_reason("s3cret", COMMAND, "")
    for field, value in (("user", "mallory"), ("issue", 13), ("command", "test"), ("args", "x")):
        assert "does not match" in unsealed_reason("s3cret", COMMAND | {field: value}, given), field
    assert "does not match" in unsealed_reason("s3cret", COMMAND, seal("another secret", COMMAND))


def test_without_a_webhook_secret_nothing_is_sealed_or_checked():
    assert seal("", COMMAND) == ""
    assert unsealed_reason("", COMMAND, "") is None
