"""The GitHub App manifest and what is stored from GitHub's answer (the flow itself:
tests/cli/test_setup.py, against the fake GitHub)."""

from __future__ import annotations

import stat

from app.github.manifest import EVENTS, PERMISSIONS, AppCredentials, build_manifest, new_app_url, save


def test_the_manifest_points_github_at_this_scrubbot():
    manifest = build_manifest("https://scrub.example.org/", "http://127.0.0.1:8765/callback", "Scrubbot for ml")
    assert manifest["hook_attributes"] == {"url": "https://scrub.example.org/webhooks/github", "active": True}
    assert manifest["redirect_url"] == "http://127.0.0.1:8765/callback"
    assert manifest["callback_urls"] == ["https://scrub.example.org/auth/callback"]
    assert manifest["default_permissions"] == PERMISSIONS and manifest["default_events"] == EVENTS
    assert manifest["public"] is False and manifest["name"] == "Scrubbot for ml"


def test_an_organization_gets_its_own_new_app_page():
    assert new_app_url("https://github.com", "s1") == "https://github.com/settings/apps/new?state=s1"
    assert new_app_url("https://ghe.example/", "s2", "ml-org") == \
        "https://ghe.example/organizations/ml-org/settings/apps/new?state=s2"


def test_saving_keeps_other_lines_replaces_old_values_and_locks_the_files(tmp_path):
    config = tmp_path / "scrub.env"
    config.write_text("SCRUB_TRIGGER_LABEL=scrub-me\nSCRUB_GITHUB_APP_ID=1\n")
    creds = AppCredentials("77", "my-bot", "https://github.com/apps/my-bot", "-----BEGIN RSA PRIVATE KEY-----\nx\n",
                           "hook-secret", "Iv1.abc", "client-secret")
    key = save(creds, "https://scrub.example.org", config)
    values = dict(line.split("=", 1) for line in config.read_text().splitlines())
    assert values["SCRUB_TRIGGER_LABEL"] == "scrub-me" and values["SCRUB_GITHUB_APP_ID"] == "77"
    assert list(values).count("SCRUB_GITHUB_APP_ID") == 1 and values["SCRUB_GITHUB_PRIVATE_KEY"] == str(key)
    assert (values["SCRUB_WEBHOOK_SECRET"], values["SCRUB_OAUTH_CLIENT_ID"]) == ("hook-secret", "Iv1.abc")
    assert len(values["SCRUB_SESSION_SECRET"]) >= 32 and values["SCRUB_PUBLIC_URL"] == "https://scrub.example.org"
    assert key.name == "my-bot.private-key.pem" and key.read_text() == creds.pem
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(config.stat().st_mode) == 0o600
