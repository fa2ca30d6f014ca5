"""Fixtures and helpers for the service tests: a migrated database, the API with a recording
enqueuer, and signed webhook deliveries."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.db.migrate import upgrade
from app.db.session import Database
from app.github.webhooks import sign
from app.settings import Settings
from workers.enqueue import RecordingEnqueuer

SECRET = "test-webhook-secret"


def migrated_database(url: str) -> Database:
    upgrade(url)
    return Database(url)


@pytest.fixture
def settings() -> Settings:
    return Settings(webhook_secret=SECRET)


@pytest.fixture
def database(settings: Settings) -> Database:
    settings.ensure_data_dir()
    db = migrated_database(settings.resolved_database_url)
    yield db
    db.dispose()


@pytest.fixture
def enqueuer() -> RecordingEnqueuer:
    return RecordingEnqueuer()


@pytest.fixture
def client(settings: Settings, database: Database, enqueuer: RecordingEnqueuer) -> TestClient:
    from app.api import create_app

    with TestClient(create_app(settings, enqueuer=enqueuer)) as test_client:
        yield test_client


def load_payload(fixtures: Path, name: str) -> dict[str, Any]:
    return json.loads((fixtures / name).read_text())


def webhook_headers(event: str, body: bytes, secret: str = SECRET, delivery: str | None = None) -> dict[str, str]:
    return {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "X-Hub-Signature-256": sign(secret, body),
        "Content-Type": "application/json",
    }


def deliver(client: Any, event: str, payload: dict | bytes, delivery: str | None = None, secret: str = SECRET):
    """POST a signed delivery the way GitHub does; returns the response."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return client.post("/webhooks/github", content=body, headers=webhook_headers(event, body, secret, delivery))
