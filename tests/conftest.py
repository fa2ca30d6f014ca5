"""Fixtures every test directory may use. Directory-specific fixtures live beside their tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Copied from octokit/webhooks (MIT): see tests/fixtures/github/LICENSE and README.md.
WEBHOOK_FIXTURES = ROOT / "tests" / "fixtures" / "github" / "webhooks"


@pytest.fixture
def webhook_fixtures() -> Path:
    if not WEBHOOK_FIXTURES.is_dir():
        pytest.fail(f"webhook fixtures not found at {WEBHOOK_FIXTURES} (they are part of the repository)")
    return WEBHOOK_FIXTURES


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path, monkeypatch):
    """Every test gets its own data dir and no SCRUB_* leaking in from the developer's shell."""
    for name in list(os.environ):
        if name.startswith("SCRUB_") and not name.startswith("SCRUB_TEST_"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SCRUB_DATA_DIR", str(tmp_path / "scrub-data"))
    empty_config = tmp_path / "no-config.env"  # nor a developer's ./.env or ~/.config/scrubbot/scrub.env
    empty_config.touch()
    monkeypatch.setenv("SCRUB_CONFIG", str(empty_config))
    from app.settings import reset_settings_cache

    reset_settings_cache()
    yield
    reset_settings_cache()
