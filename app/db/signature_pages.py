"""What the signature page and the flaky-test list read: one signature's history, and the
flaky signatures with their measured rates.

Rates are counts, stated with what they count:

- **CI**: failing attempts seen, out of those plus the reruns that passed (the runs it failed
  in, and their retries). It is measured on failing runs only (Scrubbot ingests failed runs),
  so it says how often a rerun of a failed run fails again, not how often CI fails overall.
- **sandbox**: the CI job's reruns of the test in the sandbox (`rerun` of the linked
  `ci_failure` run: failures / runs, with its 95% Wilson interval), when a job ran.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from app.db.models import (
    FailureOccurrence,
    FailureSignature,
    Run,
    SignatureLink,
    StageEvent,
)

MIN_PREFIX = 8  # hex digits of a fingerprint a page address needs (branch names carry 12)
MAX_SHOWN = 200  # occurrences on a page, newest first
FLAKY_LIMIT = 200


@dataclass
class SignatureView:
    signature: FailureSignature
    occurrences: list[FailureOccurrence] = field(default_factory=list)  # newest first
    links: list[SignatureLink] = field(default_factory=list)
    job: Run | None = None  # the ci_failure run opened for it
    sandbox: dict[str, Any] | None = None  # that run's rerun summary
    installation_id: int | None = None

    @property
    def runs(self) -> int:
        return len({o.workflow_run_id for o in self.occurrences}) or self.signature.count

    @property
    def attempts_failed(self) -> int:
        return len(self.occurrences)

    @property
    def passed_reruns(self) -> int:
        return len({o.workflow_run_id for o in self.occurrences if o.passed_on_rerun})

    @property
    def ci_rate(self) -> float | None:
        seen = self.attempts_failed + self.passed_reruns
        return self.attempts_failed / seen if seen else None

    @property
    def branches(self) -> list[tuple[str, int]]:
        return Counter(o.head_branch for o in self.occurrences if o.head_branch).most_common(20)

    @property
    def pull_requests(self) -> list[int]:
        return sorted({n for o in self.occurrences for n in (o.pull_requests or [])})

    @property
    def labels(self) -> list[tuple[str, int]]:
        return Counter(o.label for o in self.occurrences if o.label).most_common()

    @property
    def first_seen(self) -> datetime:
        return self.signature.first_seen

    @property
    def last_seen(self) -> datetime:
        return self.signature.last_seen

    def to_json(self) -> dict[str, Any]:
        s = self.signature
        return {
            "repo": s.repo, "fingerprint": s.fingerprint, "source": s.source, "test": s.test_id, "job": s.job,
            "exception": s.exception, "message": s.message[:2000], "error_key": s.error_key,
            "first_seen": _iso(s.first_seen), "last_seen": _iso(s.last_seen), "runs": self.runs,
            "attempts_failed": self.attempts_failed, "passed_on_rerun": self.passed_reruns,
            "ci_rate": self.ci_rate, "sandbox": self.sandbox, "flaky": s.flaky, "flaky_evidence": s.flaky_evidence,
            "classification": s.classification, "classifications": dict(self.labels),
            "branches": dict(self.branches), "pull_requests": self.pull_requests,
            "ci_run": s.linked_run_id,
            "links": [{"kind": link.kind, "number": link.number, "title": link.title, "relation": link.relation,
                       "run_id": link.run_id} for link in self.links],
            "occurrences": [occurrence_json(o) for o in self.occurrences],
        }


def occurrence_json(o: FailureOccurrence) -> dict[str, Any]:
    return {"workflow_run_id": o.workflow_run_id, "attempt": o.attempt, "head_sha": o.head_sha,
            "head_branch": o.head_branch, "event": o.event, "head_repo": o.head_repo, "workflow": o.workflow,
            "job": o.job, "pull_requests": list(o.pull_requests or []), "label": o.label,
            "classification": o.classification, "passed_on_rerun": o.passed_on_rerun,
            "ingest_run_id": o.ingest_run_id, "seen_at": _iso(o.seen_at)}


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def find_signature(session: Session, repo: str, prefix: str) -> FailureSignature | None:
    """The signature of `repo` whose fingerprint starts with `prefix` (unique, ≥ 8 hex digits)."""
    prefix = prefix.lower()
    if len(prefix) < MIN_PREFIX or len(prefix) > 64 or any(c not in "0123456789abcdef" for c in prefix):
        return None
    found = session.exec(select(FailureSignature).where(
        FailureSignature.repo == repo, col(FailureSignature.fingerprint).startswith(prefix)).limit(2)).all()
    return found[0] if len(found) == 1 else None


def _sandbox(session: Session, run_id: int | None) -> dict[str, Any] | None:
    if run_id is None:
        return None
    event = session.exec(select(StageEvent).where(StageEvent.run_id == run_id, StageEvent.stage == "rerun")
                         .order_by(col(StageEvent.id).desc())).first()
    rerun = (event.output or {}).get("rerun") if event else None
    if not isinstance(rerun, dict) or not rerun.get("runs"):
        return None
    return {k: rerun.get(k) for k in ("runs", "failures", "rate", "interval")} | {
        "verdict": (event.output or {}).get("verdict")}


def view(session: Session, signature: FailureSignature) -> SignatureView:
    occurrences = list(session.exec(select(FailureOccurrence).where(
        FailureOccurrence.repo == signature.repo, FailureOccurrence.fingerprint == signature.fingerprint,
    ).order_by(col(FailureOccurrence.id).desc()).limit(MAX_SHOWN)))
    links = list(session.exec(select(SignatureLink).where(
        SignatureLink.repo == signature.repo, SignatureLink.fingerprint == signature.fingerprint,
    ).order_by(col(SignatureLink.id))))
    job = session.get(Run, signature.linked_run_id) if signature.linked_run_id else None
    ingest = session.get(Run, occurrences[0].ingest_run_id) if occurrences and occurrences[0].ingest_run_id else None
    installation = (job or ingest).installation_id if (job or ingest) else None
    return SignatureView(signature, occurrences, links, job, _sandbox(session, signature.linked_run_id), installation)


def flaky(session: Session, limit: int = FLAKY_LIMIT) -> list[SignatureView]:
    """Flaky CI signatures, the most often failing first (distinct workflow runs)."""
    rows = session.exec(select(FailureSignature).where(
        col(FailureSignature.flaky).is_(True), FailureSignature.source == "ci",
    ).order_by(col(FailureSignature.count).desc(), col(FailureSignature.last_seen).desc()).limit(limit)).all()
    return [view(session, row) for row in rows]
