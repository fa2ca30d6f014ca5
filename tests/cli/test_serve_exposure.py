"""`scrub serve` in local mode (no OAuth) stays on loopback unless explicitly told otherwise."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import ROOT
from tests.services import free_port, wait_for_port


def serve(tmp_path, *args: str, **env: str) -> subprocess.Popen:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SCRUB_")}
    environ.update(env, SCRUB_DATA_DIR=str(tmp_path / "data"), PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-m", "app.cli.main", "serve", "--no-worker", *args], env=environ,
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_a_public_host_without_login_is_refused(tmp_path):
    process = serve(tmp_path, "--host", "0.0.0.0", "--port", str(free_port()))
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 2
    assert "refusing to serve 0.0.0.0 without login" in out and "SCRUB_OAUTH_CLIENT_ID" in out
    assert "Traceback" not in out


def test_half_configured_login_is_refused(tmp_path):
    process = serve(tmp_path, "--port", str(free_port()), SCRUB_OAUTH_CLIENT_ID="abc")
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 2 and "SCRUB_OAUTH_CLIENT_SECRET, SCRUB_SESSION_SECRET" in out


def test_loopback_says_it_is_in_local_mode(tmp_path):
    port = free_port()
    process = serve(tmp_path, "--port", str(port))
    try:
        wait_for_port(port, process)
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=60)
    assert "local mode: no GitHub login" in out
    assert f"local mode: to sign in, open http://127.0.0.1:{port}/login?token=" in out  # printed once
    assert out.count("/login?token=") == 1
    assert f"data dir: {tmp_path / 'data'}; config files read: none" in out


def test_a_configured_token_is_the_one_printed(tmp_path):
    port = free_port()
    process = serve(tmp_path, "--port", str(port), SCRUB_LOCAL_TOKEN="my token/1")
    try:
        wait_for_port(port, process)
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=60)
    assert f"open http://127.0.0.1:{port}/login?token=my%20token%2F1" in out


def test_the_explicit_flag_allows_a_public_host(tmp_path):
    port = free_port()
    process = serve(tmp_path, "--host", "0.0.0.0", "--port", str(port), SCRUB_INSECURE_NO_LOGIN="true")
    try:
        wait_for_port(port, process)
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=60)
    assert "local mode: no GitHub login" in out
    assert f"open http://127.0.0.1:{port}/login?token=" in out  # every interface: the loopback one
