"""Webhook ingest under load: N concurrent senders for D seconds against `scrub serve`.

    python benchmarks/webhook_ingest.py                  # starts `scrub serve` on the embedded defaults
    python benchmarks/webhook_ingest.py --rate 200      # latency at a fixed offered load
    python benchmarks/webhook_ingest.py --url http://host:8000 --secret S   # an existing service

Deliveries are GitHub's example payloads (mostly events Scrubbot ignores, as in real traffic)
plus a fraction of `issues.labeled` with the trigger label, each on a new issue, so runs are
created and enqueued while the embedded worker processes them on the same machine. Prints
p50/p99 latency and deliveries per second. Target: p99 < 100 ms at >= 200 deliveries/s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "github" / "webhooks"  # octokit/webhooks (MIT), in the repository
BACKGROUND = [
    ("issues", "issues/opened.payload.json"),
    ("issue_comment", "issue_comment/created.payload.json"),
    ("workflow_run", "workflow_run/completed.payload.json"),
    ("push", "push/payload.json"),
    ("pull_request", "pull_request/opened.payload.json"),
    ("check_run", "check_run/completed.payload.json"),
]


def sign(secret: str, body: bytes) -> str:
    import hashlib
    import hmac

    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def signed(event: str, payload: dict, secret: str) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(payload).encode()
    headers = {"X-GitHub-Event": event, "X-Hub-Signature-256": sign(secret, body), "Content-Type": "application/json"}
    return body, headers


def prepare(secret: str, deliveries: int, run_fraction: float) -> list[tuple[bytes, dict[str, str]]]:
    """Signed bodies, made before the clock starts: signing is the sender's cost, not the server's."""
    background = [(event, json.loads((FIXTURES / name).read_text())) for event, name in BACKGROUND if (FIXTURES / name).exists()]
    labeled = json.loads((FIXTURES / "issues/labeled.payload.json").read_text())
    labeled["label"]["name"] = "scrub"
    every = int(1 / run_fraction) if run_fraction > 0 else 0
    prepared = []
    for i in range(deliveries):
        if every and i % every == 0:
            payload = json.loads(json.dumps(labeled))
            payload["issue"]["number"] = 100_000 + i
            prepared.append(signed("issues", payload, secret))
        else:
            prepared.append(signed(*background[i % len(background)], secret))
    return prepared


async def sender(client, queue: list, until: float, interval: float, offset: float, latencies: list, statuses: Counter) -> None:
    """Send back to back (`interval` 0), or one delivery every `interval` seconds; latency runs
    from when a delivery was due, so a slow answer also counts against the ones it delayed.
    Paced senders start `offset` apart, so the load is even rather than in bursts."""
    due = time.perf_counter() + offset
    while due < until and queue:
        if interval:
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
        body, headers = queue.pop()
        headers = {**headers, "X-GitHub-Delivery": str(uuid.uuid4())}
        started = due if interval else time.perf_counter()
        try:
            response = await client.post("/webhooks/github", content=body, headers=headers)
            statuses[response.status_code] += 1
            latencies.append(time.perf_counter() - started)
        except httpx.HTTPError as exc:
            statuses[type(exc).__name__] += 1
        due = due + interval if interval else time.perf_counter()


async def load(url: str, prepared: list, senders: int, duration: float, rate: float) -> tuple[list[float], Counter, float]:
    latencies: list[float] = []
    statuses: Counter = Counter()
    limits = httpx.Limits(max_connections=senders, max_keepalive_connections=senders)
    interval = senders / rate if rate else 0.0
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=10) as client:
        await client.get("/healthz")
        started = time.perf_counter()
        until = started + duration
        offsets = [k * interval / senders for k in range(senders)]
        await asyncio.gather(*(sender(client, prepared, until, interval, o, latencies, statuses) for o in offsets))
        elapsed = time.perf_counter() - started
    return latencies, statuses, elapsed


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_serve(secret: str, data_dir: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRUB_")}
    env.update(SCRUB_DATA_DIR=str(data_dir), SCRUB_WEBHOOK_SECRET=secret)
    log = (data_dir.parent / "serve.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli.main", "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz").status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"scrub serve did not start; see {data_dir.parent / 'serve.log'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="an already running service (default: start `scrub serve`)")
    parser.add_argument("--secret", default="benchmark-secret")
    parser.add_argument("--senders", type=int, default=16)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=0, help="deliveries/s in all (default: as fast as answered)")
    parser.add_argument("--run-fraction", type=float, default=0.02, help="share of deliveries that start a run")
    args = parser.parse_args()

    process = None
    with tempfile.TemporaryDirectory(prefix="scrub-bench-") as tmp:
        url = args.url
        if url is None:
            process, url = start_serve(args.secret, Path(tmp) / "data")
        try:
            prepared = prepare(args.secret, deliveries=int(args.duration * 2000), run_fraction=args.run_fraction)
            latencies, statuses, elapsed = asyncio.run(load(url, prepared, args.senders, args.duration, args.rate))
        finally:
            if process is not None:
                process.send_signal(signal.SIGINT)
                process.wait(60)
    ok = sum(n for code, n in statuses.items() if isinstance(code, int) and 200 <= code < 300)
    mode = f"paced at {args.rate:.0f}/s" if args.rate else "back to back"
    print(f"senders {args.senders} ({mode}), {elapsed:.1f} s, {len(latencies)} deliveries, statuses {dict(statuses)}")
    print(f"latency p50 {percentile(latencies, 0.50) * 1000:.1f} ms, p99 {percentile(latencies, 0.99) * 1000:.1f} ms, "
          f"max {max(latencies) * 1000:.1f} ms")
    print(f"throughput {ok / elapsed:.0f} deliveries/s (2xx)")


if __name__ == "__main__":
    main()
