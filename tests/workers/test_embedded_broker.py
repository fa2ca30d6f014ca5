"""The embedded broker delivers every message whole, even while a consumer polls the folder."""

from __future__ import annotations

import threading
import uuid

from kombu import Connection, Exchange, Queue

from app.settings import Settings
from workers.celery_app import broker_transport_options, create_celery
from workers.embedded_broker import TRANSPORT

MESSAGES = 300


def _send_while_polling(transport: str, options: dict) -> tuple[int, int]:
    """Publish MESSAGES while another connection drains the queue; (received, broken)."""
    # kombu keeps declared exchanges in class-level state: a fresh name per call keeps runs apart
    name = f"q-{uuid.uuid4().hex}"
    queue = Queue(name, Exchange(name, type="direct"), routing_key=name)
    received, broken, done = [], [], threading.Event()

    def consume() -> None:
        with Connection("filesystem://localhost//", transport=transport, transport_options=options) as conn:
            channel = conn.channel()
            queue(channel).declare()
            while True:
                # Read before the poll: only a poll that began after the last publish and found
                # nothing proves the queue drained (one that began earlier can miss the last file).
                published_all = done.is_set()
                try:
                    message = queue(channel).get(no_ack=True)
                except Exception:  # an empty file decodes to an error: that message is lost
                    broken.append(1)
                    continue
                if message is not None:
                    received.append(message.payload)
                elif published_all:
                    return

    consumer = threading.Thread(target=consume)
    with Connection("filesystem://localhost//", transport=transport, transport_options=options) as conn:
        producer = conn.Producer()
        queue(conn.channel()).declare()
        consumer.start()
        for i in range(MESSAGES):
            producer.publish({"n": i, "pad": "x" * 20_000}, exchange=queue.exchange, routing_key=name,
                             serializer="json", declare=[queue])
        done.set()
    consumer.join(60)
    return len(received), len(broken)


def test_every_message_arrives_whole_while_the_consumer_polls(tmp_path):
    options = broker_transport_options(Settings(data_dir=tmp_path))
    received, broken = _send_while_polling(TRANSPORT, {**options, "polling_interval": 0})
    assert (received, broken) == (MESSAGES, 0)


def test_the_embedded_default_uses_the_atomic_transport(tmp_path):
    assert create_celery(Settings(data_dir=tmp_path)).conf.broker_transport == TRANSPORT
    assert create_celery(Settings(data_dir=tmp_path, broker_url="redis://127.0.0.1:1/0")).conf.broker_transport is None
