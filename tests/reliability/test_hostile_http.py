"""Hostile HTTP against a real `scrub serve`, beyond the webhook (#21, findings 7, 9, 10).

- 7: a huge form POST with a junk session cookie. Before this change the CSRF check buffered the
  whole body first (a 400 MB `POST /logout` raised the API's RSS from 102 to 889 MB); now every
  route's body is bounded as it streams in: the server answers 413 once the cap is passed, while
  the client is still sending, and reads no more.
- 9: the data dir and `scrub.db` were 0755 and 0644 (other accounts of a shared machine read
  every run); now 0700 and 0600, the embedded broker's folders included. An id no run can have
  (past 2**31 - 1, `run.id`'s range on Postgres) is a 422 on every route, never a 500.
- 10: a signed `/scrub` comment replayed under a new `X-GitHub-Delivery` id ran again; now it is
  a duplicate (the comment's id). `/metrics` was open to anyone; now it needs its token.
"""

from __future__ import annotations

import json
import os
import select
import socket
import stat
from pathlib import Path

import pytest

from tests.conftest import WEBHOOK_FIXTURES
from tests.reliability.lease_harness import post_webhook
from tests.reliability.trust_harness import Server, serve, stop

pytestmark = pytest.mark.services
SECRET = "hostile-http-secret"
METRICS_TOKEN = "prometheus-scrape-token"
MB = 1 << 20
SENT_AT_MOST = 48 * MB  # what the client offers; the server should answer long before


@pytest.fixture
def server(tmp_path, fake_github):
    served = serve(tmp_path, fake_github.url, "--no-worker", webhook_secret=SECRET, metrics_token=METRICS_TOKEN)
    try:
        yield served
    finally:
        stop(served)


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def chunked_post(server: Server, path: str, headers: dict[str, str]) -> tuple[int, int]:
    """POST a chunked body of up to `SENT_AT_MOST`, 1 MB a chunk, looking for the answer after
    each; (status, bytes sent before the answer came)."""
    blob = b"csrf_token=" + b"a" * (MB - 11)
    chunk = b"%x\r\n" % len(blob) + blob + b"\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nTransfer-Encoding: chunked\r\n{head}\r\n"
                     .encode())
        sent = 0
        try:
            while sent < SENT_AT_MOST and not select.select([sock], [], [], 0)[0]:
                sock.sendall(chunk)
                sent += len(blob)
            sock.sendall(b"0\r\n\r\n")  # the end of the body, for a server that reads it all
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered and closed
        answer = b""
        while b"\r\n" not in answer:
            data = sock.recv(4096)
            if not data:
                break
            answer += data
    return (int(answer.split()[1]) if answer else 0), sent


def test_a_huge_form_is_cut_off_at_its_cap_while_it_is_still_being_sent(server):
    before = rss_kb(server.process.pid)
    status, sent = chunked_post(server, "/logout", {"Cookie": "scrub_session=junk", "Origin": server.base,
                                                    "Content-Type": "application/x-www-form-urlencoded"})
    after = rss_kb(server.process.pid)
    print(f"POST /logout: {status} after {sent // MB} MB sent; API RSS {before // 1024} -> {after // 1024} MB")
    # The cap is 64 KiB; the kernel's socket buffers may hold a few MB more before the answer is seen.
    assert status == 413 and sent < 16 * MB, (status, sent)
    assert (after - before) // 1024 < 50, (before, after)


def test_the_data_dir_and_the_database_are_private(server):
    assert server.stranger().get("/healthz").status_code == 200  # serve migrated and made its broker
    for path in (server.data_dir, server.data_dir / "broker", server.data_dir / "broker" / "queue"):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o700, path
    assert stat.S_IMODE(os.stat(server.data_dir / "scrub.db").st_mode) == 0o600


ID_ROUTES = [("GET", "/api/v1/runs/{}"), ("GET", "/runs/{}"), ("GET", "/runs/{}/events"),
             ("GET", "/runs/{}/artifacts/log"), ("GET", "/runs/{}/repro/original.py"),
             *(("POST", "/api/v1/runs/{}/" + action) for action in ("approve", "reject", "retry", "cancel"))]


def test_an_id_no_run_can_have_is_a_422_on_every_route(server):
    operator = server.operator()
    for method, route in ID_ROUTES:
        for value in (2**70, 2**63, 2**31, -1, 0, "1e3", "x"):
            answer = operator.request(method, route.format(value), data={"reason": "r"} if "reject" in route else None)
            assert answer.status_code in (404, 422), (method, route, value, answer.status_code)
        assert operator.request(method, route.format(2**31 - 1)).status_code == 404  # the largest id: not there


def test_a_replayed_command_is_a_duplicate_and_metrics_need_their_token(server):
    payload = json.loads((WEBHOOK_FIXTURES / "issue_comment" / "created.payload.json").read_text())
    payload["comment"]["body"] = "/scrub retry"
    body = json.dumps(payload).encode()
    first = post_webhook(server.base, SECRET, "issue_comment", body)
    replay = post_webhook(server.base, SECRET, "issue_comment", body)  # the same signed bytes, a new delivery id
    assert first.status_code == 202 and first.json()["status"] == "queued"
    assert replay.status_code == 200 and replay.json() == {"status": "duplicate"}

    stranger = server.stranger()
    assert stranger.get("/metrics").status_code == 401  # from this very machine, without the token
    scraped = stranger.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert scraped.status_code == 200 and 'scrub_webhook_deliveries_total{event="issue_comment"' in scraped.text
