"""/healthz: database and broker; a broker that is down degrades, it does not fail, and the
webhook path still answers (with a real Celery producer on a Redis that is not there)."""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from app.api import create_app
from app.settings import Settings
from tests.foundation import SECRET, deliver, load_payload, migrated_database
from tests.services import free_port

WEBHOOK_BUDGET_S = 30  # a bound for a hung producer, not a performance assertion


def test_embedded_broker_and_database_are_ok(client):
    body = client.get("/healthz").json()
    assert body == {"status": "ok", "database": "ok", "broker": "ok (filesystem)", "webhooks": True}


def issue_labeled(webhook_fixtures) -> dict:
    payload = load_payload(webhook_fixtures, "issues/labeled.payload.json")
    payload["label"]["name"] = "scrub"
    return payload


def test_a_dead_broker_degrades_health_and_webhooks_still_answer(tmp_path, webhook_fixtures):
    settings = Settings(webhook_secret=SECRET, data_dir=tmp_path, broker_url=f"redis://127.0.0.1:{free_port()}/0",
                        metrics_token="scrape-me")
    migrated_database(settings.resolved_database_url).dispose()
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8000",
                    headers={"Authorization": "Bearer scrape-me"}) as client:  # the real Celery enqueuer
        health = client.get("/healthz")
        assert health.status_code == 200 and health.json()["status"] == "degraded"
        assert health.json()["database"] == "ok" and health.json()["broker"].startswith("unavailable: ConnectionError")
        started = time.monotonic()
        response = deliver(client, "issues", issue_labeled(webhook_fixtures))
        assert time.monotonic() - started < WEBHOOK_BUDGET_S
        assert response.status_code == 202 and response.json()["status"] == "not_queued"
        metrics = client.get("/metrics").text
        assert "scrub_broker_up 0.0" in metrics and 'scrub_webhook_deliveries_total{event="issues",outcome="not_queued"} 1.0' in metrics


@pytest.mark.services
def test_a_live_redis_is_ok(redis_server, tmp_path):
    settings = Settings(data_dir=tmp_path, broker_url=redis_server)
    migrated_database(settings.resolved_database_url).dispose()
    with TestClient(create_app(settings)) as client:
        assert client.get("/healthz").json()["broker"] == "ok (redis)"


def test_a_database_that_does_not_answer_is_an_error(tmp_path):
    url = f"postgresql+psycopg://scrub@127.0.0.1:{free_port()}/scrub?connect_timeout=2"  # nothing listens
    settings = Settings(data_dir=tmp_path, database_url=url)
    from workers.enqueue import RecordingEnqueuer

    with TestClient(create_app(settings, enqueuer=RecordingEnqueuer())) as client:
        response = client.get("/healthz")
    assert response.status_code == 503 and response.json()["status"] == "error"
    assert response.json()["database"].startswith("unavailable: OperationalError")
