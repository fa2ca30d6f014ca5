"""The `HistoryStore` port (`app.ci_history`) over the `failure_occurrence`, `signature_link`
and `failure_signature` tables: where a signature failed, how it was classified, what it links.

Every write is idempotent: an occurrence is unique per (signature, workflow run, attempt), a
link per (signature, kind, number); a racing second insert is an update or nothing.
"""

from __future__ import annotations

import hashlib

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from app.ci_history import (
    Classification,
    Occurrence,
    SignatureHistory,
    SignatureLink,
    SignatureMatch,
)
from app.db.models import FailureOccurrence, FailureSignature
from app.db.models import SignatureLink as LinkRow
from app.db.session import Database
from app.domain import utcnow

MAX_OCCURRENCES = 500  # the newest kept in a history read: enough to classify, bounded


def occurrence_of(row: FailureOccurrence) -> Occurrence:
    return Occurrence(
        fingerprint=row.fingerprint, workflow_run_id=row.workflow_run_id, attempt=row.attempt,
        head_sha=row.head_sha, head_branch=row.head_branch, event=row.event, head_repo=row.head_repo,
        workflow=row.workflow, job=row.job, pull_requests=tuple(row.pull_requests or ()),
        classification=Classification.from_dict(row.classification), ingest_run_id=row.ingest_run_id,
        passed_on_rerun=row.passed_on_rerun, seen_at=row.seen_at,
    )


def link_of(row: LinkRow) -> SignatureLink:
    return SignatureLink(row.kind, row.number, row.title, row.run_id, row.relation)


def issue_fingerprint(repo: str, error_key: str) -> str:
    """The fingerprint of an error seen in issues (never equal to a CI fingerprint)."""
    return hashlib.sha256(f"issue\x1f{repo.lower()}\x1f{error_key}".encode()).hexdigest()


class HistoryMixin:
    database: Database

    def record_occurrence(self, repo: str, occurrence: Occurrence, error_key: str = "") -> None:
        o = occurrence
        row = FailureOccurrence(
            repo=repo, fingerprint=o.fingerprint, workflow_run_id=o.workflow_run_id, attempt=o.attempt,
            head_sha=o.head_sha[:64], head_branch=o.head_branch[:300], event=o.event[:60],
            head_repo=o.head_repo[:200], workflow=o.workflow[:300], job=o.job[:500],
            pull_requests=list(o.pull_requests)[:50], label=o.classification.label,
            classification=o.classification.to_dict(), ingest_run_id=o.ingest_run_id,
            passed_on_rerun=o.passed_on_rerun, seen_at=o.seen_at or utcnow(),
        )
        with self.database.session() as session:
            session.add(row)
            try:
                session.commit()
            except IntegrityError:  # a retried ingest: the occurrence is there already
                session.rollback()
                if session.exec(select(FailureOccurrence.id).where(
                        FailureOccurrence.repo == repo, FailureOccurrence.fingerprint == o.fingerprint,
                        FailureOccurrence.workflow_run_id == o.workflow_run_id,
                        FailureOccurrence.attempt == o.attempt)).first() is None:
                    raise  # another constraint failed
                return
            values: dict = {"classification": o.classification.label}
            if error_key:
                values["error_key"] = error_key[:500]
            if o.passed_on_rerun:
                values |= {"flaky": True, "flaky_evidence": _rerun_evidence(o.workflow_run_id, o.attempt)}
            session.exec(update(FailureSignature).where(FailureSignature.repo == repo,
                                                        FailureSignature.fingerprint == o.fingerprint).values(**values))
            session.commit()

    def history(self, repo: str, fingerprint: str) -> SignatureHistory:
        with self.database.session() as session:
            signature = session.exec(select(FailureSignature).where(
                FailureSignature.repo == repo, FailureSignature.fingerprint == fingerprint)).first()
            rows = session.exec(select(FailureOccurrence).where(
                FailureOccurrence.repo == repo, FailureOccurrence.fingerprint == fingerprint,
            ).order_by(col(FailureOccurrence.id).desc()).limit(MAX_OCCURRENCES)).all()
        return SignatureHistory(
            fingerprint=fingerprint, occurrences=tuple(occurrence_of(r) for r in reversed(rows)),
            flaky=bool(signature and signature.flaky), flaky_evidence=signature.flaky_evidence if signature else "",
            linked_run_id=signature.linked_run_id if signature else None,
        )

    def mark_passed_on_rerun(self, repo: str, workflow_run_id: int, attempt: int) -> list[str]:
        with self.database.session() as session:
            rows = session.exec(select(FailureOccurrence).where(
                FailureOccurrence.repo == repo, FailureOccurrence.workflow_run_id == workflow_run_id,
                FailureOccurrence.attempt < attempt)).all()
            fingerprints = sorted({r.fingerprint for r in rows})
            if not rows:
                return []
            session.exec(update(FailureOccurrence).where(col(FailureOccurrence.id).in_([r.id for r in rows]))
                         .values(passed_on_rerun=True))
            first = min(r.attempt for r in rows)
            session.exec(update(FailureSignature).where(
                FailureSignature.repo == repo, col(FailureSignature.fingerprint).in_(fingerprints),
            ).values(flaky=True, flaky_evidence=_rerun_evidence(workflow_run_id, first, attempt)))
            session.commit()
        return fingerprints

    def mark_flaky(self, repo: str, fingerprint: str, evidence: str) -> None:
        with self.database.session() as session:
            session.exec(update(FailureSignature).where(
                FailureSignature.repo == repo, FailureSignature.fingerprint == fingerprint,
            ).values(flaky=True, flaky_evidence=evidence[:500]))
            session.commit()

    def link(self, repo: str, fingerprint: str, link: SignatureLink) -> None:
        row = LinkRow(repo=repo, fingerprint=fingerprint, kind=link.kind, number=link.number,
                      title=link.title[:300], relation=link.relation[:60], run_id=link.run_id)
        with self.database.session() as session:
            session.add(row)
            try:
                session.commit()
            except IntegrityError:  # linked already: keep the first link's relation, refresh the title
                session.rollback()
                changed = session.exec(update(LinkRow).where(
                    LinkRow.repo == repo, LinkRow.fingerprint == fingerprint, LinkRow.kind == link.kind,
                    LinkRow.number == link.number).values(title=link.title[:300]))
                session.commit()
                if changed.rowcount != 1:  # not a duplicate: another constraint (a run that is gone)
                    raise

    def find_by_error(self, repo: str, error_key: str) -> list[SignatureMatch]:
        if not error_key:
            return []
        with self.database.session() as session:
            signatures = session.exec(select(FailureSignature).where(
                FailureSignature.repo == repo, FailureSignature.error_key == error_key[:500]).limit(20)).all()
            found = []
            for s in signatures:
                links = session.exec(select(LinkRow).where(LinkRow.repo == repo, LinkRow.fingerprint == s.fingerprint)
                                     .order_by(col(LinkRow.id))).all()
                found.append(SignatureMatch(s.fingerprint, s.source, tuple(link_of(r) for r in links), s.count))
        return found

    def observe_issue(self, repo: str, error_key: str, exception: str, message: str) -> str:
        fingerprint = issue_fingerprint(repo, error_key)
        row = FailureSignature(repo=repo, fingerprint=fingerprint, source="issue", error_key=error_key[:500],
                               exception=exception[:300], message=message, kind="exception", count=0, run_ids=[])
        with self.database.session() as session:
            session.add(row)
            try:
                session.commit()
            except IntegrityError:
                session.rollback()
                session.exec(update(FailureSignature).where(
                    FailureSignature.repo == repo, FailureSignature.fingerprint == fingerprint).values(last_seen=utcnow()))
                session.commit()
        return fingerprint


def _rerun_evidence(workflow_run_id: int, failed: int, passed: int | None = None) -> str:
    then = f", passed in attempt {passed}" if passed else ", passed on a later attempt"
    return f"failed in attempt {failed} of workflow run {workflow_run_id}{then}"
