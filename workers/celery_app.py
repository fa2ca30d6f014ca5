"""The Celery app, built from settings when a process starts (never at import time).

Production uses Redis (`SCRUB_BROKER_URL=redis://...`). The embedded default uses kombu's
filesystem transport: messages are files under `<data dir>/broker/`, so `scrub serve` needs no
server. Results are not stored anywhere: tasks record what they did in the database.
"""

from __future__ import annotations

from pathlib import Path

from celery import Celery
from kombu import Exchange, Queue

from app.domain import QUEUES
from app.private_files import private_dir
from workers import embedded_broker
from workers.enqueue import PROGRESSION_TICK_TASK
from app.settings import Settings

TASK_SOFT_TIME_LIMIT_S = 45 * 60  # above the longest stage budget (repro + fix + PR phases)
TASK_TIME_LIMIT_S = TASK_SOFT_TIME_LIMIT_S + 60
# Redis re-delivers an unacknowledged task after this; it must exceed the hard time limit.
REDIS_VISIBILITY_TIMEOUT_S = 2 * TASK_TIME_LIMIT_S
EMBEDDED_POLLING_INTERVAL_S = 0.2  # how often the filesystem transport looks for new messages


def broker_folders(data_dir: Path) -> dict[str, Path]:
    root = data_dir.resolve() / "broker"
    return {
        "data_folder_in": root / "queue",
        "data_folder_out": root / "queue",
        "processed_folder": root / "processed",
        "control_folder": root / "control",  # kombu's default is ./control, in whatever cwd
        "staging_folder": root / "staging",  # messages are written here, then renamed into queue/
    }


def broker_transport_options(settings: Settings) -> dict:
    if settings.embedded_broker:
        folders = broker_folders(settings.data_dir)
        settings.ensure_data_dir()  # private (0700): the messages carry run ids and commands
        for folder in folders.values():
            private_dir(folder.parent)
            private_dir(folder)
        options = {name: str(path) for name, path in folders.items()}
        return {**options, "store_processed": False, "polling_interval": EMBEDDED_POLLING_INTERVAL_S}
    return {"visibility_timeout": REDIS_VISIBILITY_TIMEOUT_S}


def create_celery(settings: Settings) -> Celery:
    broker = settings.resolved_broker_url
    if broker == "filesystem://":
        broker = "filesystem://localhost//"  # the same transport, without kombu's "no hostname" warning
    app = Celery("scrubbot", broker=broker, include=["workers.tasks"])
    if settings.embedded_broker:
        app.conf.broker_transport = embedded_broker.TRANSPORT
    app.conf.update(
        broker_transport_options=broker_transport_options(settings),
        broker_connection_retry_on_startup=True,
        task_queues=[Queue(name, Exchange(name, type="direct"), routing_key=name) for name in QUEUES],
        task_default_queue=QUEUES[0],
        task_create_missing_queues=False,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_ignore_result=True,
        task_soft_time_limit=TASK_SOFT_TIME_LIMIT_S,
        task_time_limit=TASK_TIME_LIMIT_S,
        task_serializer="json",
        accept_content=["json"],
        worker_prefetch_multiplier=1,
        worker_hijack_root_logger=False,
        timezone="UTC",
        # `scrub beat` (a real broker): the progression scheduler's tick (workers/schedule.py).
        beat_schedule={"progression": {"task": PROGRESSION_TICK_TASK, "schedule": settings.progression_tick_s,
                                       "options": {"queue": QUEUES[0]}}},
    )
    return app


def worker_argv(settings: Settings, queues: list[str], concurrency: int, loglevel: str = "INFO") -> list[str]:
    """Arguments for `Celery.worker_main`. The filesystem transport has no fanout, so the
    broadcast features (gossip, mingle, remote control) are off with it."""
    argv = ["worker", "-Q", ",".join(queues), "-c", str(concurrency), "--loglevel", loglevel]
    if settings.embedded_broker:
        argv += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
    return argv
