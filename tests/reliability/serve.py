"""`scrub serve` as a real process on a free 127.0.0.1 port, for the attacks in this directory.

`Served` starts it on the embedded defaults (SQLite, filesystem broker, its own worker) with
secrets in its environment that the attacks try to extract, pointed at the fake GitHub; it
posts signed (or unsigned) webhooks and reads the API, and reports the server's RSS.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from app.github.webhooks import sign
from tests.conftest import ROOT
from tests.services import free_port, kill_leftovers, wait_for_port

FINISHED = {"succeeded", "failed", "skipped", "awaiting_approval"}

# Values an attacker would love to see. Shaped like the real thing, so the token shape and
# the PEM shape would be caught by the redactor too; the test asserts none appears anywhere.
TOKEN = "ghp_" + "R3liab1lityT0ken" * 2 + "Zq9x"
WEBHOOK_SECRET = "reliability-webhook-secret-5b1e"
PRIVATE_KEY_LINE = "MIIEpAIBAAKCAQEAreliabilityPrivateKeyBodyLine0123456789abcdefXYZ"
PRIVATE_KEY = f"-----BEGIN RSA PRIVATE KEY-----\n{PRIVATE_KEY_LINE}\n-----END RSA PRIVATE KEY-----\n"
API_TOKEN = "operator-api-token-7f3a9c2e"


@dataclass
class Served:
    url: str
    process: subprocess.Popen
    log_path: Path
    data_dir: Path
    secrets: dict[str, str] = field(default_factory=dict)

    def post_webhook(self, event: str, payload: dict | bytes, *, signed: bool = True) -> httpx.Response:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": str(uuid.uuid4()),
                   "Content-Type": "application/json"}
        if signed:
            headers["X-Hub-Signature-256"] = sign(WEBHOOK_SECRET, body)
        return httpx.post(f"{self.url}/webhooks/github", content=body, headers=headers, timeout=60)

    def get(self, path: str) -> httpx.Response:
        return httpx.get(f"{self.url}{path}", timeout=30)

    def wait_for_run(self, run_id: int, deadline_s: float = 420, until: set[str] = FINISHED) -> dict:
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            run = self.get(f"/api/v1/runs/{run_id}").json()
            if run.get("status") in until:
                return run
            time.sleep(1)
        pytest.fail(f"run {run_id} did not finish; serve log:\n{self.log()[-4000:]}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def rss_kb(self) -> int:
        """VmRSS of the API process (`scrub serve` itself: the worker is a child process)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")


def start_serve(tmp_path: Path, github_url: str, **extra_env: str) -> Served:
    port = free_port()
    data_dir = tmp_path / "data"
    env = {
        **os.environ,
        "SCRUB_DATA_DIR": str(data_dir),
        "SCRUB_GITHUB_API_URL": github_url,
        "SCRUB_GITHUB_TOKEN": TOKEN,
        "SCRUB_GITHUB_PRIVATE_KEY": PRIVATE_KEY,
        "SCRUB_WEBHOOK_SECRET": WEBHOOK_SECRET,
        "SCRUB_OPERATOR_API_TOKEN": API_TOKEN,
        "SCRUB_SANDBOX": "bwrap",
        "SCRUB_RETRY_DELAY_S": "1",  # a retried run comes back in 1 s, not 15
        "SCRUB_REPRO_TIMEOUT": "60",
        **extra_env,
    }
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "app.cli.main", "serve", "--host", "127.0.0.1", "--port", str(port), "-c", "1"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
    wait_for_port(port, process)
    secrets = {"token": TOKEN, "webhook secret": WEBHOOK_SECRET, "private key": PRIVATE_KEY_LINE,
               "operator api token": API_TOKEN}
    return Served(f"http://127.0.0.1:{port}", process, log_path, data_dir, secrets)


def stop_serve(served: Served) -> None:
    """Ctrl-C to serve's process group; SIGKILL what is left of it (and of its worker)."""
    os.killpg(served.process.pid, signal.SIGINT)
    try:
        served.process.wait(timeout=40)
    except subprocess.TimeoutExpired:
        os.killpg(served.process.pid, signal.SIGKILL)
        served.process.wait()
    kill_leftovers(str(served.data_dir))
