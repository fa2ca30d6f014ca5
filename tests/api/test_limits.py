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


def drive(app, method: str, path: str, headers: dict[str, str], chunks, chunk_size: int) -> tuple[int, int]:
    """Call the ASGI app with a body streamed in `chunk_size` pieces from `chunks` (an iterator,
    never held whole); return (status, body bytes the app asked for before it answered)."""
    import asyncio

    pulled = 0
    answered: list[int] = []

    async def receive():
        nonlocal pulled
        piece = next(chunks, None)
        if piece is None:
            return {"type": "http.request", "body": b"", "more_body": False}
        pulled += len(piece)
        return {"type": "http.request", "body": piece, "more_body": True}

    async def send(message):
        if message["type"] == "http.response.start":
            answered.append(message["status"])

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
             "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000)}
    asyncio.run(app(scope, receive, send))
    return answered[0], pulled


@pytest.mark.parametrize(("path", "who", "expected"), [
    ("/logout", {"cookie": "scrub_session=junk"}, 413),  # the CSRF check reads the form
    ("/api/v1/runs/1/reject", {"cookie": "scrub_session=junk"}, 401),  # anonymous: refused unread
    ("/api/v1/runs/1/reject", "operator", 413),  # the route reads the reason
    ("/api/v1/runs/1/approve", "operator", 404),  # no body wanted: answered unread
])
def test_a_chunked_form_past_the_cap_is_refused_before_it_is_all_read(client, path, who, expected):
    """A 400 MB POST /logout with a junk session cookie once made the CSRF check buffer it all
    (RSS 102 -> 889 MB). Measured in bytes the app pulled, not memory: never past the cap."""
    from app.api.limits import MAX_FORM_BYTES

    chunk = b"a" * 65536
    chunks = (chunk for _ in range(400 * (1 << 20) // len(chunk)))
    if who == "operator":
        who = {"authorization": client.headers["authorization"]}
    headers = {"host": "127.0.0.1:8000", "origin": "http://127.0.0.1:8000", **who,
               "content-type": "application/x-www-form-urlencoded", "transfer-encoding": "chunked"}
    status, pulled = drive(client.app, "POST", path, headers, chunks, len(chunk))
    assert status == expected and pulled <= MAX_FORM_BYTES + len(chunk), (status, pulled)


def test_a_declared_length_past_the_cap_is_refused_before_a_byte_is_read(client):
    chunks = iter([b"x" * 65536] * 10)
    headers = {"host": "127.0.0.1:8000", "content-length": str(500 * (1 << 20)),
               "content-type": "application/x-www-form-urlencoded"}
    assert drive(client.app, "POST", "/logout", headers, chunks, 65536) == (413, 0)
    assert drive(client.app, "POST", "/logout", {**headers, "content-length": "12x"}, iter([]), 0)[0] == 400


def test_a_form_under_the_cap_still_works(client, database):
    """The reject form's reason (a few hundred bytes) goes through the limit untouched."""
    from app.db import queries

    with database.session() as session:
        run = queries.create_run(session, kind="issue", repo="o/r", issue=1, status="awaiting_approval")
        session.commit()
    answer = client.post(f"/api/v1/runs/{run.id}/reject", data={"reason": "r" * 400})
    assert answer.status_code == 200 and "rejected" in answer.json()["message"]
    with database.session() as session:
        assert session.get(type(run), run.id).error.endswith("r" * 400)


def test_the_webhook_keeps_its_own_25_mb_cap(client):
    """Larger than a form, smaller than GitHub's cap: a webhook body of 1 MB is read whole."""
    body = b'{"zen": "' + b"z" * (1 << 20) + b'"}'
    assert deliver(client, "ping", body).status_code == 200
