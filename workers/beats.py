"""Job heartbeats (`workers/jobs.py`): a repro worker says its job is alive through the broker,
and the reaper thread of every trusted worker turns the beats into lease renewals.

A beat is a plain message on the `scrub-beats` queue (kombu's `SimpleQueue`, on Redis and on
the embedded filesystem broker alike), not a Celery task: it must not wait behind long stages
in a worker's pool. A lost beat costs nothing but the next one; a job whose beats stop for two
leases is reaped like a lost worker, and its run resumes on a trusted worker.
"""

from __future__ import annotations

import logging
from queue import Empty
from typing import Any

from app.db import jobs as job_leases
from app.db.session import Database
from workers.jobs import Beat, job_owner

log = logging.getLogger(__name__)

BEATS_QUEUE = "scrub-beats"
DRAIN_LIMIT = 10_000  # beats read per reaper pass
LEASES_PER_BEAT = 2  # a job's lease lasts two leases from its last beat seen


def send_beat(app: Any, beat: Beat) -> None:
    with app.connection_for_write() as connection:
        queue = connection.SimpleQueue(BEATS_QUEUE, serializer="json")
        try:
            queue.put(beat.to_dict())
        finally:
            queue.close()


def drain(app: Any, limit: int = DRAIN_LIMIT) -> list[Beat]:
    """The beats waiting now (read and removed)."""
    found: list[Beat] = []
    with app.connection_for_read() as connection:
        queue = connection.SimpleQueue(BEATS_QUEUE, no_ack=True)
        try:
            for _ in range(limit):
                try:
                    message = queue.get_nowait()
                except Empty:
                    break
                try:
                    found.append(Beat.from_dict(message.payload))
                except (TypeError, ValueError, KeyError) as exc:
                    log.warning("a beat that is not one was dropped: %s", exc)
        finally:
            queue.close()
    return found


def apply_beats(database: Database, beats: list[Beat]) -> int:
    """Renew the lease of each job that beat (its latest beat); how many still held their run."""
    latest: dict[tuple[int, str], Beat] = {}
    for beat in beats:
        latest[(beat.run_id, beat.job_id)] = beat
    held = 0
    for beat in latest.values():
        lease_s = max(1.0, min(beat.lease_s, 3600.0)) * LEASES_PER_BEAT
        held += job_leases.beat(database, beat.run_id, job_owner(beat.job_id), beat.stage[:60], lease_s)
    return held
