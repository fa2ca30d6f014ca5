"""A real `scrub serve` for the trust attacks (#21, round 3): started on a free loopback port
against the fake GitHub, its sign-in URL read from its own output (what a person copies), and
clients for the parties the attacks play: the operator's browser, a script, another account on
the same machine, a page that rebinds its DNS name to 127.0.0.1."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.reliability.lease_harness import scrub_env, start, stop_group, wait_for
from tests.services import free_port, wait_for_port

SIGN_IN = re.compile(r"open (http://127\.0\.0\.1:\d+/login\?token=[A-Za-z0-9_%.~-]+)")


@dataclass
class Server:
    base: str
    port: int
    log: Path
    process: subprocess.Popen
    data_dir: Path

    def sign_in_url(self) -> str:
        """The URL `scrub serve` printed at start (local mode), as a person copies it."""
        return wait_for("the sign-in URL in serve's output", lambda: _found(self.log), self.log).group(1)

    def token(self) -> str:
        return self.sign_in_url().split("token=", 1)[1]

    def operator(self) -> httpx.Client:
        """A script of the operator: local mode's token as a bearer token."""
        return httpx.Client(base_url=self.base, timeout=30, headers={"Authorization": f"Bearer {self.token()}"})

    def browser(self) -> httpx.Client:
        """The operator's browser after opening the printed URL (a session cookie, no bearer)."""
        client = httpx.Client(base_url=self.base, timeout=30)
        landed = client.get(self.sign_in_url(), follow_redirects=False)
        assert landed.status_code == 303 and "scrub_session=" in landed.headers.get("set-cookie", ""), landed.text
        return client

    def stranger(self) -> httpx.Client:
        """Any other process on this machine: it reaches 127.0.0.1, it has no token."""
        return httpx.Client(base_url=self.base, timeout=30)


def _found(log: Path) -> re.Match | None:
    return SIGN_IN.search(log.read_text(errors="replace")) if log.exists() else None


def serve(tmp_path: Path, github_url: str, *args: str, **scrub: str) -> Server:
    """`scrub serve --port P -c 1 *args` with `SCRUB_<NAME>=value` for each of `scrub`."""
    port, log = free_port(), tmp_path / "serve.log"
    data_dir = tmp_path / "data"
    env = scrub_env(data_dir, github_token="t", github_api_url=github_url, **scrub)
    process = start(["serve", "--port", str(port), "-c", "1", *args], env, log)
    wait_for_port(port, process)
    return Server(f"http://127.0.0.1:{port}", port, log, process, data_dir)


def stop(server: Server) -> None:
    stop_group(server.process)
