"""The progression scheduler: each tick, start the re-checks that are due.

`tick(services)` reads the tracked bugs (`app.db.progression`), the newest build and the budget
spent in the last day, asks `app.pipelines.progression.schedule.due` which bugs to re-check, and
creates one `progression` run per bug (its params built from the run that found it) and
enqueues it. Two ticks at once cannot start two re-checks of one bug: a bug's active run holds
its `active_key`.

Who ticks: on a real broker, Celery beat (`scrub beat`: the `scrub.progression_tick` task every
`SCRUB_PROGRESSION_TICK_S`, one beat per deployment); on the embedded default (`scrub serve`,
`scrub worker` without Redis), a thread of the worker (`start_scheduler`), as the reaper is.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.exc import IntegrityError

from app.db import progression as tracked_bugs
from app.db import queries
from app.db.session import Database
from app.domain import RunKind, utcnow
from app.pipelines.base import DEFAULT_QUEUE
from app.pipelines.progression import schedule
from workers.enqueue import Enqueuer

log = logging.getLogger(__name__)
DAY = timedelta(days=1)


def tick(settings: Any, database: Database, enqueuer: Enqueuer, now: datetime | None = None) -> list[int]:
    """Start the re-checks due now; the ids of the runs created."""
    if settings.progression_runs_per_day <= 0:
        return []
    now = now or utcnow()
    build = schedule.current_build(settings)
    with database.session() as session:
        bugs = tracked_bugs.tracked(session)
        spent = tracked_bugs.runs_since(session, now - DAY)
        found = tracked_bugs.found_at(session, [bug.source_run for bug in bugs])
    chosen = schedule.due(bugs, build=build["label"], now=now, interval_s=settings.progression_interval_s,
                          per_day=settings.progression_runs_per_day, spent=spent, found_at=found)
    created = []
    for item in chosen:
        bug = item.bug
        with database.session() as session:
            source = tracked_bugs.run_state(session, bug.source_run)
            last = schedule.build_named(settings, bug.build) if bug.target == schedule.ISSUE else None
            params = schedule.params_for(bug, source, build=build, last_build=last, reason=item.reason)
            try:
                run = queries.create_run(session, kind=RunKind.progression, repo=bug.repo, issue=bug.number,
                                         target=f"https://github.com/{bug.repo}/{'pull' if bug.target == 'pull' else 'issues'}/{bug.number}",
                                         title=bug.title, trigger=f"schedule: {item.reason}"[:200],
                                         installation_id=bug.installation_id, params=params)
                session.commit()
            except IntegrityError:  # another tick started it meanwhile
                session.rollback()
                continue
            run_id = run.id
        enqueuer.run_pipeline(run_id, DEFAULT_QUEUE)
        created.append(run_id)
        log.info("progression: re-checking %s#%s (%s) as run %s", bug.repo, bug.number, item.reason, run_id)
    return created


def start_scheduler(settings: Any, enqueuer: Enqueuer, stop: threading.Event | None = None) -> threading.Thread:
    """Tick now, then every `SCRUB_PROGRESSION_TICK_S`, until `stop` is set (the embedded broker's
    stand-in for Celery beat)."""
    database = Database(settings.resolved_database_url, pooled=False)  # this process forks workers
    stop = stop or threading.Event()

    def loop() -> None:
        while True:
            try:
                tick(settings, database, enqueuer)
            except Exception as exc:  # the database or the index may be away: try again next time
                log.warning("progression tick failed: %s", exc)
            if stop.wait(settings.progression_tick_s):
                return

    thread = threading.Thread(target=loop, name="scrub-progression", daemon=True)
    thread.start()
    return thread
