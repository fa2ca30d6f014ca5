"""What the API asks of the broker: is it reachable (for /healthz), and how many messages wait
on each queue (for /metrics). Both answer quickly or fail quickly: they never hang the caller.

Redis keeps a queue as a list named after it (`LLEN`). The embedded filesystem broker keeps
one file per message, named `<stamp>_<uuid>.<queue>.msg`, in its queue folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from app.domain import QUEUES
from app.settings import Settings
from workers.celery_app import broker_folders

TIMEOUT_S = 1.0


class BrokerUnavailable(Exception):
    """The broker did not answer; the message says why, for /healthz."""


def _redis(settings: Settings):  # noqa: ANN202  (redis.Redis)
    import redis

    return redis.Redis.from_url(settings.resolved_broker_url, socket_connect_timeout=TIMEOUT_S, socket_timeout=TIMEOUT_S)


def _queue_folder(settings: Settings) -> Path:
    return broker_folders(settings.data_dir)["data_folder_in"]


def check(settings: Settings) -> str:
    """The broker's kind when it answers; raises `BrokerUnavailable` when it does not."""
    url = settings.resolved_broker_url
    if settings.embedded_broker:  # its folders are made on first use: the data dir must be writable
        if not os.access(settings.data_dir, os.W_OK):
            raise BrokerUnavailable(f"embedded broker: {settings.data_dir} is not writable")
        return "filesystem"
    if url.startswith(("redis://", "rediss://", "unix://")):
        try:
            client = _redis(settings)
            try:
                client.ping()
            finally:
                client.close()
        except Exception as exc:  # connection refused, timeout, auth: all mean "not usable now"
            raise BrokerUnavailable(f"{type(exc).__name__}: {exc}") from exc
        return "redis"
    return url.split(":", 1)[0]  # another transport: not probed


def queue_depths(settings: Settings) -> dict[str, int]:
    """Messages waiting on each queue; raises `BrokerUnavailable` when the broker does not answer."""
    if settings.embedded_broker:
        folder = _queue_folder(settings)
        names = [p.name for p in folder.iterdir()] if folder.is_dir() else []
        return {queue: sum(1 for n in names if n.endswith(f".{queue}.msg")) for queue in QUEUES}
    try:
        client = _redis(settings)
        try:
            return {queue: int(client.llen(queue)) for queue in QUEUES}
        finally:
            client.close()
    except Exception as exc:
        raise BrokerUnavailable(f"{type(exc).__name__}: {exc}") from exc
