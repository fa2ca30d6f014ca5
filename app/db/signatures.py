"""`SignatureStore` over the `failure_signature` table: counting that survives concurrent workers.

Two ingests of two workflow runs may count the same fingerprint at the same moment, and two
may both see it reach the threshold. Neither lock-free read-modify-write nor a blind insert is
safe, so:

- `observe` inserts the row (the unique constraint on (repo, fingerprint) turns a racing
  insert into an update) and updates it by compare-and-swap on `count`: the UPDATE applies only
  if `count` is still what was read, otherwise it re-reads and retries. Works the same on
  SQLite and Postgres, without table locks.
- `open_ci_run` inserts the `Run` and links it in one transaction with
  `UPDATE ... SET linked_run_id = :new WHERE id = :id AND linked_run_id IS NULL`; if another
  worker linked first, zero rows change and the transaction (with its `Run`) is rolled back.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlmodel import select

from app.db.models import FailureSignature, Run
from app.domain import FailureLike as Failure
from app.domain import Observation, RunKind, RunStatus, utcnow
from app.db.queries import active_key
from app.db.session import Database
from app.db.signature_history import HistoryMixin

_MAX_ATTEMPTS = 20


def _observation(row: FailureSignature) -> Observation:
    return Observation(
        fingerprint=row.fingerprint,
        count=row.count,
        workflow_run_ids=tuple(row.run_ids or ()),
        linked_run_id=row.linked_run_id,
        first_seen=row.first_seen,
        last_seen=row.last_seen,
    )


class DbSignatureStore(HistoryMixin):
    """Counting (below) and the history port (`app.db.signature_history`)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def _read(self, repo: str, fingerprint: str) -> FailureSignature | None:
        with self.database.session() as session:
            query = select(FailureSignature).where(
                FailureSignature.repo == repo, FailureSignature.fingerprint == fingerprint
            )
            return session.exec(query).first()

    def _insert(self, repo: str, failure: Failure, workflow_run_id: int) -> bool:
        now = utcnow()
        row = FailureSignature(
            repo=repo,
            fingerprint=failure.signature,
            test_id=failure.test[:1000],
            job=failure.job[:500],
            kind=failure.kind,
            exception=failure.exception[:300],
            message=failure.message,
            first_seen=now,
            last_seen=now,
            count=1,
            run_ids=[workflow_run_id],
        )
        with self.database.session() as session:
            session.add(row)
            try:
                session.commit()
            except IntegrityError:  # another worker inserted it first: count as an update
                session.rollback()
                return False
        return True

    def observe(self, repo: str, failure: Failure, workflow_run_id: int) -> Observation:
        for _ in range(_MAX_ATTEMPTS):
            row = self._read(repo, failure.signature)
            if row is None:
                if self._insert(repo, failure, workflow_run_id):
                    row = self._read(repo, failure.signature)
                    assert row is not None
                    return _observation(row)
                continue
            run_ids = list(row.run_ids or [])
            if workflow_run_id in run_ids:
                return _observation(row)  # already counted: a retried ingest or a redelivery
            run_ids.append(workflow_run_id)
            with self.database.session() as session:
                result = session.exec(
                    update(FailureSignature)
                    .where(FailureSignature.id == row.id, FailureSignature.count == row.count)
                    .values(count=row.count + 1, run_ids=run_ids, last_seen=utcnow())
                )
                session.commit()
            if result.rowcount == 1:
                fresh = self._read(repo, failure.signature)
                assert fresh is not None
                return _observation(fresh)
        raise RuntimeError(f"could not count signature {failure.signature[:12]} after {_MAX_ATTEMPTS} attempts")

    def open_ci_run(
        self, repo: str, fingerprint: str, *, target: str, params: dict[str, Any], installation_id: int | None = None
    ) -> int | None:
        with self.database.session() as session:
            run = Run(
                kind=RunKind.ci_failure,
                repo=repo,
                target=target[:500],
                title=ci_title(params),
                trigger="ci_repeat",
                status=RunStatus.queued,
                params=params,
                installation_id=installation_id,
            )
            run.active_key = active_key(run.kind, repo, None, params)
            session.add(run)
            try:
                session.flush()
            except IntegrityError:  # a run of this fingerprint is active already
                session.rollback()
                return None
            linked = session.exec(
                update(FailureSignature)
                .where(
                    FailureSignature.repo == repo,
                    FailureSignature.fingerprint == fingerprint,
                    FailureSignature.linked_run_id.is_(None),
                )
                .values(linked_run_id=run.id)
            )
            if linked.rowcount != 1:
                session.rollback()
                return None
            session.commit()
            return run.id


def ci_title(params: dict[str, Any]) -> str:
    """What the run list calls a CI job: the failing test (or job) and its exception."""
    failure = params.get("failure") or {}
    what = str(failure.get("test") or failure.get("job") or params.get("fingerprint") or "CI failure")
    exception = str(failure.get("exception") or "")
    return (f"{what}: {exception}" if exception else what)[:300]
