"""Hostile bodies on POST /webhooks/github of a real `scrub serve`: 4xx, bounded memory, no 5xx.

Each attack is sent over a real socket to 127.0.0.1, a bounded number of times; the API
process's VmRSS is read before and after and may not grow by more than `RSS_GROWTH_MB`.
"""

from __future__ import annotations

import json
import socket

import httpx

from tests.reliability.serve import WEBHOOK_SECRET, Served
from app.github.webhooks import sign

RSS_GROWTH_MB = 100
MB = 1 << 20


def _raw_post(served: Served, headers: dict[str, str], chunks, limit_bytes: int) -> int:
    """POST over a raw socket, writing `chunks` until the server answers or closes; the status."""
    host, port = served.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        sock.sendall(f"POST /webhooks/github HTTP/1.1\r\nHost: {host}\r\n{head}\r\n".encode())
        sent = 0
        try:
            for chunk in chunks:
                sock.sendall(chunk)
                sent += len(chunk)
                if sent >= limit_bytes:
                    break
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed: what we want
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while b"\r\n" not in answer:
            data = sock.recv(4096)
            if not data:
                break
            answer += data
    return int(answer.split()[1]) if answer else 0


def test_oversized_chunked_deep_and_huge_int_bodies(serve: Served):
    assert serve.get("/healthz").status_code == 200
    before = serve.rss_kb()
    statuses = []

    # 1. A declared 500 MB unsigned body: refused before it is read (we offer 64 MB of it).
    blob = b"x" * MB
    statuses.append(_raw_post(serve, {"Content-Length": str(500 * MB), "X-GitHub-Event": "issues"},
                              iter(lambda: blob, None), 64 * MB))
    # 2. Chunked, no Content-Length, 40 MB: cut off at 25 MB.
    def chunked():
        for _ in range(40):
            yield b"%x\r\n" % MB + blob + b"\r\n"
        yield b"0\r\n\r\n"
    statuses.append(_raw_post(serve, {"Transfer-Encoding": "chunked", "X-GitHub-Event": "issues"},
                              chunked(), 45 * MB))
    # 3. Signed, nested 100k deep; 4. signed, an issue number of 2^70; 5. signed, 5000 digits.
    deep = b'{"action": "labeled", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    huge = json.dumps({"action": "labeled", "label": {"name": "scrub"}, "issue": {"number": 2**70},
                       "repository": {"full_name": "o/r"}}).encode()
    digits = b'{"action": "labeled", "issue": {"number": ' + b"9" * 5000 + b"}}"
    for body in (deep, huge, digits):
        statuses.append(serve.post_webhook("issues", body).status_code)
    # The same attacks again, a bounded number of times: memory must not creep up.
    for _ in range(3):
        statuses.append(serve.post_webhook("issues", deep).status_code)
        statuses.append(httpx.post(f"{serve.url}/webhooks/github", content=iter([blob] * 30),
                                   headers={"X-GitHub-Event": "issues",
                                            "X-Hub-Signature-256": sign(WEBHOOK_SECRET, b"")},
                                   timeout=60).status_code)
    after = serve.rss_kb()
    print(f"API RSS before {before // 1024} MB, after {after // 1024} MB; statuses {statuses}")

    assert statuses[:2] == [413, 413], statuses
    assert statuses[2:5] == [422, 422, 422], statuses
    assert all(400 <= s < 500 for s in statuses), statuses
    assert (after - before) / 1024 < RSS_GROWTH_MB, (before, after)
    assert serve.get("/healthz").status_code == 200  # still serving
    assert "Traceback" not in serve.log()
