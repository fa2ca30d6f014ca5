"""A worker's hold on the run it executes: a heartbeat thread that renews the lease, and a
run context that stops the pipeline once the lease is gone (cancelled, or reaped because this
worker looked dead), so a cancelled run is not overwritten by the worker that ran it."""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from typing import Any

from app.db import leases
from app.db.context import DbRunContext
from app.db.session import Database

log = logging.getLogger(__name__)


class LeaseLost(RuntimeError):
    """This worker no longer holds the run: stop without recording anything more."""


def new_owner() -> str:
    """Who holds a lease: host, process, and this execution (so a retry is a new holder)."""
    return f"{socket.gethostname()[:80]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Heartbeat:
    """Renews the lease every third of its length until stopped (a daemon thread: a long stage
    does not starve it, and it dies with the process, which is the point)."""

    def __init__(self, database: Database, run_id: int, owner: str, lease_s: float) -> None:
        self.database, self.run_id, self.owner, self.lease_s = database, run_id, owner, lease_s
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"lease-{run_id}", daemon=True)

    def __enter__(self) -> "Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _beat(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            try:
                if not leases.renew(self.database, self.run_id, self.owner, self.lease_s):
                    self.lost.set()
                    return
            except Exception as exc:  # the database may be restarting: keep trying until the lease ends
                log.warning("run %s: lease not renewed: %s", self.run_id, exc)


class LeasedRunContext(DbRunContext):
    """A `DbRunContext` that checks the lease before each stage and before the final status."""

    def __init__(self, *args: Any, owner: str, heartbeat: Heartbeat | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.owner = owner
        self.heartbeat = heartbeat

    def _check(self) -> None:
        if (self.heartbeat is not None and self.heartbeat.lost.is_set()) or not leases.holds(
            self.database, self.run_id, self.owner
        ):
            raise LeaseLost(f"run {self.run_id} is no longer held by {self.owner}")

    def stage_started(self, stage: str) -> None:
        self._check()
        super().stage_started(stage)

    def set_status(self, status: str, verdict: str | None = None, error: str | None = None) -> None:
        self._check()
        super().set_status(status, verdict, error)
