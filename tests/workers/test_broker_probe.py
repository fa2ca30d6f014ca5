"""The broker probe behind /healthz and scrub_queue_depth: real brokers, no mocks."""

from __future__ import annotations

import pytest

from app.settings import Settings
from tests.services import free_port
from workers import broker_probe
from workers.celery_app import create_celery
from workers.enqueue import CeleryEnqueuer


def test_embedded_broker_depths_count_messages_per_queue(tmp_path):
    settings = Settings(data_dir=tmp_path)
    assert broker_probe.check(settings) == "filesystem"
    assert broker_probe.queue_depths(settings) == {"default": 0, "repro-cpu": 0, "repro-gpu": 0}
    producer = CeleryEnqueuer(create_celery(settings))
    for run_id in range(3):
        producer.repro_job({"run_id": run_id}, "repro-gpu")  # the repro queues carry jobs (workers/jobs.py)
    producer.handle_comment(command="help", repo="o/r", issue=1, user="u")
    assert broker_probe.queue_depths(settings) == {"default": 1, "repro-cpu": 0, "repro-gpu": 3}


def test_a_redis_that_is_not_there_is_unavailable_quickly(tmp_path):
    settings = Settings(data_dir=tmp_path, broker_url=f"redis://127.0.0.1:{free_port()}/0")
    with pytest.raises(broker_probe.BrokerUnavailable, match="Connection"):
        broker_probe.check(settings)
    with pytest.raises(broker_probe.BrokerUnavailable):
        broker_probe.queue_depths(settings)


@pytest.mark.services
def test_redis_depths_are_the_queue_lengths(redis_server, tmp_path):
    settings = Settings(data_dir=tmp_path, broker_url=redis_server)
    import redis

    client = redis.Redis.from_url(settings.resolved_broker_url)
    client.delete(*broker_probe.QUEUES)  # the server is shared by the session's tests
    try:
        producer = CeleryEnqueuer(create_celery(settings))
        producer.run_pipeline(1)
        producer.repro_job({"run_id": 2}, "repro-cpu")
        producer.repro_job({"run_id": 3}, "repro-cpu")
        assert broker_probe.check(settings) == "redis"
        assert broker_probe.queue_depths(settings) == {"default": 1, "repro-cpu": 2, "repro-gpu": 0}
    finally:
        client.delete(*broker_probe.QUEUES)
        client.close()
