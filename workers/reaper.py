"""The reaper: resumes runs whose worker died, at worker startup and then every
`SCRUB_REAPER_INTERVAL_S` (a daemon thread in each `scrub worker`, so it runs the same on the
embedded filesystem broker and on Redis; many reapers are safe, see `app.db.leases`).

A run whose lease expired is put back on its queue (and enqueued here) to resume at its first
unfinished stage, or failed with a reason after `SCRUB_MAX_ATTEMPTS` lost workers. Each pass
first applies the heartbeats of the jobs on repro workers (`workers/beats.py`), whose leases
the repro workers cannot renew themselves (they have no database).
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

from app.db import leases
from app.db.session import Database
from app.settings import Settings
from workers.beats import apply_beats
from workers.enqueue import Enqueuer
from workers.jobs import Beat

log = logging.getLogger(__name__)


def reap_once(database: Database, enqueuer: Enqueuer, max_attempts: int) -> list[leases.Reaped]:
    reaped = leases.reap(database, max_attempts)
    for run in reaped:
        if not run.requeued:
            log.warning("run %s failed: its worker was lost %s times", run.run_id, max_attempts)
            continue
        log.warning("run %s: its worker was lost; resuming on %s", run.run_id, run.queue)
        try:
            enqueuer.run_pipeline(run.run_id, run.queue)
        except Exception as exc:  # the broker is down: strand it again, the next pass retries
            log.warning("run %s not re-enqueued (%s); will retry", run.run_id, exc)
            leases.strand(database, run.run_id)
    return reaped


def start_reaper(settings: Settings, enqueuer: Enqueuer, stop: threading.Event | None = None,
                 beats: Callable[[], list[Beat]] | None = None) -> threading.Thread:
    """Reap now, then every interval, until `stop` is set (or the process ends). `beats`: the
    repro jobs' heartbeats waiting now (`workers/beats.py`), applied before each pass."""
    database = Database(settings.resolved_database_url, pooled=False)  # this process forks workers
    stop = stop or threading.Event()

    def loop() -> None:
        while True:
            try:
                if beats is not None:
                    apply_beats(database, beats())
            except Exception as exc:  # the broker or database may be restarting: the next beats will do
                log.warning("job beats not applied: %s", exc)
            try:
                reap_once(database, enqueuer, settings.max_attempts)
            except Exception as exc:  # the database may be restarting: try again next time
                log.warning("reaper pass failed: %s", exc)
            if stop.wait(settings.reaper_interval_s):
                return

    thread = threading.Thread(target=loop, name="scrub-reaper", daemon=True)
    thread.start()
    return thread
