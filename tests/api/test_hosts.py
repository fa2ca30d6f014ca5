"""Trusted `Host` names only (DNS rebinding): loopback names, the public URL's host, the
configured extra names, the bound address; the webhook and /healthz answer any."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.api.hosts import TrustedHosts, host_name, trusted_names
from app.settings import Settings
from tests.foundation import migrated_database
from workers.enqueue import RecordingEnqueuer


@pytest.mark.parametrize(("header", "name"), [("127.0.0.1:8000", "127.0.0.1"), ("LOCALHOST", "localhost"),
                                              ("[::1]:8000", "::1"), ("::1", "::1"), ("evil.example:80", "evil.example"),
                                              ("", "")])
def test_the_name_in_a_host_header(header, name):
    assert host_name(header) == name


def test_loopback_public_and_configured_names_are_trusted():
    settings = Settings(public_url="https://scrub.example.org/base", allowed_hosts="api, Scrub-Internal")
    check = TrustedHosts(None, trusted_names(settings, bound_host="10.0.0.5"))
    for header in ("127.0.0.1:8000", "127.9.9.9", "localhost:1", "[::1]:8000", "scrub.example.org",
                   "SCRUB.example.org:443", "api:8000", "scrub-internal", "10.0.0.5:8000"):
        assert check.allows(header), header
    for header in ("evil.example:8000", "127.0.0.1.evil.example", "localhost.evil.example", "scrub.example.org.evil",
                   "10.0.0.6", "", "0.0.0.0:8000"):
        assert not check.allows(header), header
    assert "0.0.0.0" not in trusted_names(Settings(), bound_host="0.0.0.0")  # every interface: no name of its own


@pytest.fixture
def rebound(tmp_path):
    """The app as a page on evil.example sees it once evil.example resolves to 127.0.0.1."""
    settings = Settings(data_dir=tmp_path / "data", webhook_secret="s")
    settings.ensure_data_dir()
    migrated_database(settings.resolved_database_url).dispose()
    from app.api import create_app

    with TestClient(create_app(settings, enqueuer=RecordingEnqueuer()), base_url="http://evil.example:8000") as client:
        yield client


@pytest.mark.parametrize("path", ["/", "/api/v1/runs", "/api/v1/runs/1", "/runs/1", "/events/runs", "/metrics",
                                  "/docs", "/openapi.json", "/login?token=x", "/static/status.css"])
def test_a_rebound_name_reads_nothing(rebound, path):
    answer = rebound.get(path)
    assert answer.status_code == 400 and "DNS rebinding" in answer.text


def test_a_rebound_name_acts_on_nothing(rebound):
    for path in ("/api/v1/runs/1/approve", "/api/v1/runs/1/retry", "/logout"):
        assert rebound.post(path).status_code == 400


def test_the_webhook_and_health_answer_any_name(rebound):
    assert rebound.get("/healthz").status_code == 200
    assert rebound.post("/webhooks/github", content=b"{}").status_code == 401  # its signature decides
