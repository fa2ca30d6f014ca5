"""Without bubblewrap, every command that would run untrusted code says so at once, with the
command that installs it; `scrub serve` still serves the status page, starts no worker and tells
`/healthz`. (A host without bwrap is made by a PATH that does not hold it.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest
from typer.testing import CliRunner

from app.cli.main import app
from app.settings import Settings, reset_settings_cache
from tests.conftest import ROOT
from tests.services import free_port, wait_for_port

INSTALL = "sudo apt-get install bubblewrap"


@pytest.fixture
def no_bwrap(tmp_path, monkeypatch):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("SCRUB_DATA_DIR", str(tmp_path / "data"))
    for name in ("SCRUB_SANDBOX", "SCRUB_DATABASE_URL", "SCRUB_BROKER_URL"):
        monkeypatch.delenv(name, raising=False)
    reset_settings_cache()
    yield str(empty)
    reset_settings_cache()


def test_the_default_sandbox_is_bubblewrap_even_where_it_is_missing(no_bwrap):
    assert Settings().resolved_sandbox == "bwrap"  # no silent fall back to running unsandboxed
    assert Settings(sandbox="none").resolved_sandbox == "none"


def test_repro_names_bubblewrap_and_how_to_install_it(no_bwrap, tmp_path):
    repro = tmp_path / "repro.py"
    repro.write_text("raise RuntimeError('x')\n")
    result = CliRunner().invoke(app, ["repro", str(repro)])
    assert result.exit_code == 2 and INSTALL in result.stderr, result.output
    assert "--trusted" not in result.stderr and "running" not in result.stderr  # nothing ran


def test_demo_stops_before_recording_anything(no_bwrap, tmp_path):
    result = CliRunner().invoke(app, ["demo"])
    assert result.exit_code == 2 and INSTALL in result.stderr, result.output
    assert "Traceback" not in result.output and not (tmp_path / "data" / "scrub.db").exists()


def test_a_worker_without_a_sandbox_takes_no_run(no_bwrap):
    result = CliRunner().invoke(app, ["worker"])
    assert result.exit_code == 2 and INSTALL in result.stderr and "takes no run" in result.stderr, result.output


def test_serve_says_so_starts_no_worker_and_health_reports_it(no_bwrap, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRUB_")}
    env.update(PATH=no_bwrap, SCRUB_DATA_DIR=str(tmp_path / "data"), PYTHONPATH=str(ROOT), SCRUB_LOG_FORMAT="console")
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "app.cli.main", "serve", "--port", str(port)], env=env, cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for_port(port, process)
        health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10)
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=60)
    assert INSTALL in out and "no worker started" in out, out
    assert "celery@" not in out  # the worker's banner: it never started
    body = health.json()
    assert health.status_code == 200 and body["status"] == "degraded", body
    assert body["sandbox"].startswith("unavailable: bubblewrap (bwrap) is not installed"), json.dumps(body)
