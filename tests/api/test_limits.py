"""Hostile webhook bodies get a 4xx, never a 5xx: size, nesting, integer range."""

from __future__ import annotations

import json

import pytest

from app.api.limits import MAX_BODY_BYTES, BadInput, parse_json
from tests.foundation import deliver, load_payload, webhook_headers


def test_parse_json_bounds():
    assert parse_json(b'{"a": [1, -9223372036854775808, 9223372036854775807, 1.5]}')["a"][2] == 2**63 - 1
    for body, status in [
        (json.dumps({"n": 2**70}).encode(), 422),
        (b'{"n": ' + b"9" * 5000 + b"}", 422),
        (b"[" * 100_000 + b"]" * 100_000, 422),
        (b'{"a":' * 65 + b"1" + b"}" * 65, 422),
        (b'{"x": NaN}', 400),
        (b'{"x": 1e999}', 422),
        (b"\xff\xfe", 400),
    ]:
        with pytest.raises(BadInput) as info:
            parse_json(body)
        assert info.value.status == status, body[:40]


def test_issue_number_of_2_to_the_70_is_refused_not_a_500(client, webhook_fixtures, database):
    payload = load_payload(webhook_fixtures, "issues/labeled.payload.json")
    payload["label"]["name"] = "scrub"
    payload["issue"]["number"] = 2**70
    response = deliver(client, "issues", payload)
    assert response.status_code == 422, response.text


def test_deeply_nested_signed_body_is_refused(client):
    body = b'{"action": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert deliver(client, "issues", body).status_code == 422


def test_oversized_declared_length_is_413_before_reading(client):
    headers = {**webhook_headers("issues", b"{}"), "Content-Length": str(MAX_BODY_BYTES + 1)}
    response = client.post("/webhooks/github", content=b"{}", headers=headers)
    assert response.status_code == 413


def test_oversized_chunked_body_is_cut_off(client):
    chunk = b" " * (1 << 20)

    def stream():
        for _ in range((MAX_BODY_BYTES >> 20) + 2):
            yield chunk

    headers = webhook_headers("issues", b"{}")
    response = client.post("/webhooks/github", content=stream(), headers=headers)
    assert response.status_code == 413


@pytest.mark.parametrize("path", [f"/api/v1/runs/{2**70}", f"/runs/{2**70}", f"/runs/{2**70}/artifacts/log",
                                  f"/api/v1/runs?offset={2**70}"])
def test_ids_past_64_bits_are_422_not_500(client, path):
    assert client.get(path).status_code == 422
    if path.startswith("/api/v1/runs/"):
        for action in ("approve", "reject", "retry", "cancel"):  # reject once answered 500
            assert client.post(f"{path}/{action}").status_code == 422, action
