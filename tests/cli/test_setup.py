"""`scrub setup`: the GitHub App manifest flow against the fake GitHub, as a browser drives it,
then `scrub setup --check` with what it stored."""

from __future__ import annotations

import re
import stat
import threading
from html import unescape

import httpx
from typer.testing import CliRunner

from app.cli.main import app
from app.settings import Settings, reset_settings_cache
from tests.fakes.fake_github import fake_github  # noqa: F401  (pytest fixture)
from tests.services import free_port


def test_one_click_creates_the_app_stores_its_credentials_and_the_check_sees_the_installation(
        tmp_path, monkeypatch, fake_github):  # noqa: F811
    config = tmp_path / "config" / "scrub.env"
    config.parent.mkdir()
    config.write_text("SCRUB_TRIGGER_LABEL=triage-me\n")  # kept
    monkeypatch.setenv("SCRUB_CONFIG", str(config))
    monkeypatch.setenv("SCRUB_GITHUB_API_URL", fake_github.url)
    reset_settings_cache()
    port = free_port()
    outcome = {}
    command = threading.Thread(target=lambda: outcome.update(result=CliRunner().invoke(
        app, ["setup", "--url", "https://scrub.example.org", "--port", str(port)])))
    command.start()

    with httpx.Client(timeout=30) as browser:  # the person: open the page, click, GitHub redirects back
        page = None
        for _ in range(200):
            try:
                page = browser.get(f"http://127.0.0.1:{port}/")
                break
            except httpx.ConnectError:
                command.join(0.05)
        assert page is not None and page.status_code == 200
        action = unescape(re.search(r'action="([^"]+)"', page.text).group(1))
        manifest = unescape(re.search(r'name=manifest value="([^"]+)"', page.text).group(1))
        assert action.startswith(f"{fake_github.url}/settings/apps/new?state=")
        done = browser.post(action, data={"manifest": manifest}, follow_redirects=True)
        assert done.status_code == 200 and "installations/new" in done.text
    command.join(30)
    result = outcome["result"]
    assert result.exit_code == 0, result.output
    assert "https://github.com/apps/scrubbot/installations/new" in result.stdout

    created = fake_github.created_manifest
    assert created["hook_attributes"]["url"] == "https://scrub.example.org/webhooks/github"
    assert created["callback_urls"] == ["https://scrub.example.org/auth/callback"]
    assert set(created["default_events"]) == {"issues", "issue_comment", "workflow_run", "workflow_dispatch"}
    stored = dict(line.split("=", 1) for line in config.read_text().splitlines())
    assert stored["SCRUB_TRIGGER_LABEL"] == "triage-me" and stored["SCRUB_GITHUB_APP_ID"] == "4242"
    assert stored["SCRUB_WEBHOOK_SECRET"] and stored["SCRUB_OAUTH_CLIENT_ID"] == "Iv1.fakeclient"
    assert stored["SCRUB_OAUTH_CLIENT_SECRET"] and stored["SCRUB_SESSION_SECRET"]
    assert stored["SCRUB_PUBLIC_URL"] == "https://scrub.example.org"
    key = tmp_path / "config" / "scrubbot.private-key.pem"
    assert stored["SCRUB_GITHUB_PRIVATE_KEY"] == str(key) and key.read_text().startswith("-----BEGIN RSA PRIVATE KEY")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(config.stat().st_mode) == 0o600
    reset_settings_cache()
    settings = Settings()  # the config file now makes this Scrubbot that App, with login on
    assert settings.github_configured and settings.oauth_configured

    # After installing: the check finds the installation, then the delivery of a labelled issue.
    fake_github.add_repo("octo/ml")
    reset_settings_cache()
    waiting = CliRunner().invoke(app, ["setup", "--check"])
    assert waiting.exit_code == 1 and "installed on 1 account(s): octo" in waiting.stdout
    assert "label an issue `scrub`" in waiting.stdout
    fake_github.hook_deliveries.append({"guid": "d-1", "event": "issues", "action": "labeled", "status_code": 202,
                                        "status": "OK"})
    seen = CliRunner().invoke(app, ["setup", "--check"])
    assert seen.exit_code == 0 and "delivery d-1: issues.labeled answered 202 (OK)" in seen.stdout


def test_a_code_is_good_once(fake_github):  # noqa: F811
    import pytest

    from app.github.manifest import convert

    with pytest.raises(ValueError, match="run `scrub setup` again"):
        convert(fake_github.url, "no-such-code")


def test_setup_needs_the_public_url():
    result = CliRunner().invoke(app, ["setup"])
    assert result.exit_code == 2 and "--url is required" in result.stderr
