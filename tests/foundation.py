"""Fixtures and helpers for the service tests: a migrated database, the API with a recording
enqueuer, and signed webhook deliveries."""

from __future__ import annotations

import itertools
import json
import uuid
from datetime import UTC, datetime, timedelta
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


LOCAL = "http://127.0.0.1:8000"  # a loopback name: the only kind local mode answers


@pytest.fixture
def client(settings: Settings, database: Database, enqueuer: RecordingEnqueuer) -> TestClient:
    """The API as the local operator: a script that holds local mode's token (no login
    configured), on a loopback address."""
    from app.api import create_app

    app = create_app(settings, enqueuer=enqueuer)
    with TestClient(app, base_url=LOCAL) as test_client:
        if app.state.services.people.local:
            test_client.headers["Authorization"] = f"Bearer {app.state.services.people.local_token}"
        yield test_client


def load_payload(fixtures: Path, name: str) -> dict[str, Any]:
    return json.loads((fixtures / name).read_text())


_MOMENTS = itertools.count(1)


def label_applied(payload: dict[str, Any]) -> dict[str, Any]:
    """`payload` (an `issues.labeled`) as GitHub sends a new application of the label: the
    issue's `updated_at` moves to now, so it is not a replay of an earlier delivery."""
    moment = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=next(_MOMENTS))
    payload["issue"]["updated_at"] = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return payload


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


def run_to_the_end(run_id: int, services: Any, enqueuer: RecordingEnqueuer, max_jobs: int = 20) -> str:
    """`execute_run`, then each repro job it hands off run as a repro worker runs it (no database,
    no GitHub credential) and its result recorded as a trusted worker records it, until the run
    stops handing off. No broker: `tests/workers/test_integration.py` has the real one."""
    from workers.execute import execute_run
    from workers.jobs import ReproJob
    from workers.repro import run_job
    from workers.results import record_result

    outcome = execute_run(run_id, services)
    for _ in range(max_jobs):
        if not outcome.startswith("handed off"):
            return outcome
        job, queue = enqueuer.jobs.pop()
        parsed = ReproJob.from_dict(json.loads(json.dumps(job)))  # as it crosses the broker
        assert parsed.queue == queue
        result = run_job(parsed, services.settings, beat=lambda stage: None, stages_for=services.stages_for)
        outcome = record_result(json.loads(json.dumps(result.to_dict())), services)
    raise AssertionError(f"run {run_id} still handing off after {max_jobs} jobs: {outcome}")
