"""Where CI failure fingerprints are counted: the `SignatureStore` port, and its in-memory form.

The DB form is `app.db.signatures.DbSignatureStore`. A store counts each fingerprint once per
workflow run (a retried ingest or a redelivered webhook does not count twice) and opens at
most one CI run per fingerprint, however many workers race to do it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from app.domain import Observation, SignatureStore, utcnow
from app.engine.cilogs.archive import Failure

__all__ = ["MemorySignatureStore", "Observation", "SignatureStore"]


@dataclass
class _Row:
    failure: Failure
    first_seen: datetime
    last_seen: datetime
    run_ids: list[int] = field(default_factory=list)
    linked_run_id: int | None = None


class MemorySignatureStore:
    """The store for the CLI and tests: a dict under a lock; `opened` lists the runs it opened."""

    def __init__(self, first_run_id: int = 1000) -> None:
        self._rows: dict[tuple[str, str], _Row] = {}
        self._lock = threading.Lock()
        self._next_run_id = first_run_id
        self.opened: list[tuple[int, str, dict[str, Any]]] = []  # (run id, target, params)

    def observe(self, repo: str, failure: Failure, workflow_run_id: int) -> Observation:
        now = utcnow()
        with self._lock:
            row = self._rows.setdefault((repo, failure.signature), _Row(failure, now, now))
            if workflow_run_id not in row.run_ids:
                row.run_ids.append(workflow_run_id)
            row.last_seen = now
            return Observation(
                failure.signature, len(row.run_ids), tuple(row.run_ids), row.linked_run_id, row.first_seen, row.last_seen
            )

    def open_ci_run(
        self, repo: str, fingerprint: str, *, target: str, params: dict[str, Any], installation_id: int | None = None
    ) -> int | None:
        with self._lock:
            row = self._rows.get((repo, fingerprint))
            if row is None or row.linked_run_id is not None:
                return None
            run_id = row.linked_run_id = self._next_run_id
            self._next_run_id += 1
            self.opened.append((run_id, target, params))
            return run_id
