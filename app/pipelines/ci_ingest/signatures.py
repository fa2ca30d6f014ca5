"""Where CI failure fingerprints are counted: the `SignatureStore` port, and its in-memory form
(which also keeps the history: `app.ci_history.HistoryStore`).

The DB form is `app.db.signatures.DbSignatureStore`. A store counts each fingerprint once per
workflow run (a retried ingest or a redelivered webhook does not count twice) and opens at
most one CI run per fingerprint, however many workers race to do it.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from app.ci_history import Occurrence, SignatureHistory, SignatureLink, SignatureMatch
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
    source: str = "ci"
    error_key: str = ""
    flaky: bool = False
    flaky_evidence: str = ""
    occurrences: list[Occurrence] = field(default_factory=list)
    links: list[SignatureLink] = field(default_factory=list)


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

    # -- the history (app.ci_history.HistoryStore) -------------------------------------------
    def record_occurrence(self, repo: str, occurrence: Occurrence, error_key: str = "") -> None:
        with self._lock:
            row = self._rows[(repo, occurrence.fingerprint)]
            key = (occurrence.workflow_run_id, occurrence.attempt)
            if any((o.workflow_run_id, o.attempt) == key for o in row.occurrences):
                return
            row.occurrences.append(replace(occurrence, seen_at=occurrence.seen_at or utcnow()))
            row.error_key = error_key or row.error_key
            if occurrence.passed_on_rerun:
                row.flaky, row.flaky_evidence = True, f"workflow run {occurrence.workflow_run_id} passed on a rerun"

    def history(self, repo: str, fingerprint: str) -> SignatureHistory:
        with self._lock:
            row = self._rows.get((repo, fingerprint))
            if row is None:
                return SignatureHistory(fingerprint)
            return SignatureHistory(fingerprint, tuple(row.occurrences), row.flaky, row.flaky_evidence, row.linked_run_id)

    def mark_passed_on_rerun(self, repo: str, workflow_run_id: int, attempt: int) -> list[str]:
        marked = []
        with self._lock:
            for (r, fingerprint), row in self._rows.items():
                hits = [o for o in row.occurrences if r == repo and o.workflow_run_id == workflow_run_id and o.attempt < attempt]
                if hits:
                    row.occurrences = [replace(o, passed_on_rerun=True) if o in hits else o for o in row.occurrences]
                    row.flaky, row.flaky_evidence = True, f"workflow run {workflow_run_id} passed in attempt {attempt}"
                    marked.append(fingerprint)
        return sorted(marked)

    def mark_flaky(self, repo: str, fingerprint: str, evidence: str) -> None:
        with self._lock:
            row = self._rows.get((repo, fingerprint))
            if row is not None:
                row.flaky, row.flaky_evidence = True, evidence

    def link(self, repo: str, fingerprint: str, link: SignatureLink) -> None:
        with self._lock:
            row = self._rows.get((repo, fingerprint))
            if row is not None and all((x.kind, x.number) != (link.kind, link.number) for x in row.links):
                row.links.append(link)

    def find_by_error(self, repo: str, error_key: str) -> list[SignatureMatch]:
        with self._lock:
            return [SignatureMatch(fp, row.source, tuple(row.links), len(row.run_ids))
                    for (r, fp), row in self._rows.items() if r == repo and error_key and row.error_key == error_key]

    def observe_issue(self, repo: str, error_key: str, exception: str, message: str) -> str:
        fingerprint = hashlib.sha256(f"issue\x1f{repo.lower()}\x1f{error_key}".encode()).hexdigest()
        now = utcnow()
        with self._lock:
            failure = _IssueError(fingerprint, exception, message)
            self._rows.setdefault((repo, fingerprint), _Row(failure, now, now, source="issue", error_key=error_key))  # type: ignore[arg-type]
        return fingerprint


@dataclass(frozen=True)
class _IssueError:
    signature: str
    exception: str
    message: str
    test: str = ""
    job: str = ""
    kind: str = "exception"
