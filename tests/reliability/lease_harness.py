"""Helpers of the reliability tests: real `scrub` processes on this test's data dir, and
bounded waits (every loop has a count and a time bound; none asserts on wall time)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, TypeVar

from tests.conftest import ROOT

T = TypeVar("T")
BOUND_S = 120  # how long a wait may take before the test gives up: a hang detector


def scrub_env(data_dir: Path, **scrub: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRUB_") or k == "SCRUB_SHARED_DIR"}
    env.update({f"SCRUB_{k.upper()}": str(v) for k, v in scrub.items()})
    env["SCRUB_DATA_DIR"] = str(data_dir)
    env["PYTHONPATH"] = str(ROOT)
    return env


def start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    out = log.open("ab")
    return subprocess.Popen([sys.executable, "-m", "app.cli.main", *args], env=env, cwd=ROOT,
                            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def stop_group(process: subprocess.Popen, sig: int = signal.SIGTERM, wait_s: float = 30) -> None:
    """Stop the process and everything in its session (a worker and its pool children)."""
    try:
        os.killpg(process.pid, sig)
        process.wait(wait_s)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def stop_groups(processes: list[subprocess.Popen], wait_s: float = 30) -> None:
    """`stop_group` for several at once: all are signalled first, so their (seconds-long) warm
    shutdowns overlap instead of adding up."""
    for process in processes:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + wait_s
    for process in processes:
        try:
            process.wait(max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for(what: str, probe: Callable[[], T | None], log: Path | None = None, bound_s: float = BOUND_S) -> T:
    deadline = time.monotonic() + bound_s
    for _ in range(int(bound_s / 0.1) + 1):
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)
    tail = log.read_text(errors="replace")[-4000:] if log and log.exists() else ""
    raise AssertionError(f"gave up waiting for {what}\n{tail}")


# -- webhooks, the way GitHub sends them --------------------------------------------------------
FENCE = "```"
UNTRUSTED_BODY = f"{FENCE}python\nimport os\nos.system('echo hi')\nraise RuntimeError('boom')\n{FENCE}\nRuntimeError: boom"


def labeled_payload(repo: str, number: int, label: str = "scrub", moment: int = 0) -> bytes:
    """`issues.labeled` for `repo#number` (the example payload, retargeted), the label applied
    at `moment` (seconds into 2026: equal moments are one application delivered again)."""
    import json

    from tests.conftest import WEBHOOK_FIXTURES

    payload = json.loads((WEBHOOK_FIXTURES / "issues" / "labeled.payload.json").read_text())
    payload["label"]["name"] = label
    payload["issue"]["number"] = number
    payload["issue"]["html_url"] = f"https://github.com/{repo}/issues/{number}"
    payload["issue"]["updated_at"] = f"2026-01-01T{moment // 3600:02d}:{moment // 60 % 60:02d}:{moment % 60:02d}Z"
    owner, name = repo.split("/")
    payload["repository"]["full_name"], payload["repository"]["name"] = repo, name
    payload["repository"]["owner"]["login"] = owner
    return json.dumps(payload).encode()


def post_webhook(base: str, secret: str, event: str, body: bytes, delivery: str | None = None):
    import uuid

    import httpx

    from app.github.webhooks import sign

    headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
               "X-Hub-Signature-256": sign(secret, body), "Content-Type": "application/json"}
    return httpx.post(f"{base}/webhooks/github", content=body, headers=headers, timeout=60)
