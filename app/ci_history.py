"""The history of CI failure signatures: where a failure was seen, how it was classified, what
it is linked to; and the store's port for it (`HistoryStore`).

Plain frozen dataclasses, no imports from the project (like `app.domain`, of which this is the
CI part that outgrew it): the engine classifies with them, the database stores them, pipelines
pass them between the two, the status page reads them.

A failure is classified when it is ingested (`app.engine.cilogs.classify`):

- **scope**: `trunk` (a push or schedule on the default branch), `pr` (a pull request), or
  `branch` (a push elsewhere: a release branch, a `ciflow/` tag);
- **origin**: the head repository is the base repository (`same_repo`) or another (a fork);
- **broken trunk**: the same signature failed on trunk at the PR's merge base or in trunk's
  latest runs of the workflow; None when that could not be checked;
- **flaky**: the run passed on a rerun in CI, or the signature is known flaky;
- **unstable**: the job is marked unstable (its name, or an open `unstable` issue naming it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol


class Scope(StrEnum):
    trunk = "trunk"
    pr = "pr"
    branch = "branch"


class Label(StrEnum):
    """The one word a classification is shown as: the first of these that applies."""

    fork = "fork"
    unstable = "unstable"
    broken_trunk = "broken trunk"
    flaky = "flaky"
    trunk = "trunk"
    pr = "pr"
    branch = "branch"


def _known(cls: Any, data: dict[str, Any] | None) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in (data or {}).items() if k in names}


@dataclass(frozen=True)
class Classification:
    scope: str = Scope.pr
    same_repo: bool = False
    broken_trunk: bool | None = False
    flaky: bool = False
    unstable: bool = False
    evidence: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        if not self.same_repo:
            return Label.fork
        if self.unstable:
            return Label.unstable
        if self.scope != Scope.trunk and self.broken_trunk:
            return Label.broken_trunk
        if self.flaky:
            return Label.flaky
        return str(Label(self.scope))

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "evidence": list(self.evidence), "label": self.label}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Classification:
        known = _known(cls, data)
        known["evidence"] = tuple(known.get("evidence") or ())
        return cls(**known)


@dataclass(frozen=True)
class Occurrence:
    """One failure of a signature in one attempt of one workflow run."""

    fingerprint: str
    workflow_run_id: int
    attempt: int = 1
    head_sha: str = ""
    head_branch: str = ""
    event: str = ""
    head_repo: str = ""
    workflow: str = ""
    job: str = ""
    pull_requests: tuple[int, ...] = ()
    classification: Classification = field(default_factory=Classification)
    ingest_run_id: int | None = None
    passed_on_rerun: bool = False
    seen_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["classification"] = self.classification.to_dict()
        data["pull_requests"] = list(self.pull_requests)
        data["seen_at"] = self.seen_at.isoformat() if self.seen_at else None
        return data


@dataclass(frozen=True)
class SignatureHistory:
    """A signature's occurrences (oldest first) and what is known about it."""

    fingerprint: str
    occurrences: tuple[Occurrence, ...] = ()
    flaky: bool = False  # passed on a rerun in CI, or the CI job's reruns found it flaky
    flaky_evidence: str = ""
    linked_run_id: int | None = None

    def trunk(self) -> tuple[Occurrence, ...]:
        return tuple(o for o in self.occurrences if o.classification.scope == Scope.trunk
                     and o.classification.same_repo)


@dataclass(frozen=True)
class SignatureLink:
    """An issue or pull request a signature is linked to (`kind`: `issue` or `pull`)."""

    kind: str
    number: int
    title: str = ""
    run_id: int | None = None
    relation: str = ""  # "same failure", "draft PR", ...


@dataclass(frozen=True)
class SignatureMatch:
    """A signature that shares an error with something (`source`: `ci` or `issue`)."""

    fingerprint: str
    source: str
    links: tuple[SignatureLink, ...] = ()
    count: int = 0


class HistoryStore(Protocol):
    """What the pipelines record of a signature's history (DB form: `app.db.signatures`)."""

    def record_occurrence(self, repo: str, occurrence: Occurrence, error_key: str = "") -> None:
        """Store one occurrence (idempotent per signature, workflow run and attempt)."""

    def history(self, repo: str, fingerprint: str) -> SignatureHistory: ...

    def mark_passed_on_rerun(self, repo: str, workflow_run_id: int, attempt: int) -> list[str]:
        """Attempt `attempt` of the run passed: its earlier failures were flaky. Fingerprints marked."""

    def mark_flaky(self, repo: str, fingerprint: str, evidence: str) -> None: ...

    def link(self, repo: str, fingerprint: str, link: SignatureLink) -> None: ...

    def find_by_error(self, repo: str, error_key: str) -> list[SignatureMatch]:
        """The signatures (CI or issue) of `repo` whose error is `error_key`."""

    def observe_issue(self, repo: str, error_key: str, exception: str, message: str) -> str:
        """The issue-side signature of this error (made on first sight); its fingerprint."""


def from_dict_occurrence(data: dict[str, Any]) -> Occurrence:
    known = _known(Occurrence, data)
    known["classification"] = Classification.from_dict(known.get("classification"))
    known["pull_requests"] = tuple(known.get("pull_requests") or ())
    seen = known.get("seen_at")
    known["seen_at"] = datetime.fromisoformat(seen) if isinstance(seen, str) else seen
    return Occurrence(**known)
