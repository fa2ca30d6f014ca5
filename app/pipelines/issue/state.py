"""The issue pipeline's typed state (`IssueState`) and the results its stages store.

One field per key a stage writes, grouped by the stage that writes it; every field has a
default (unset until that stage has run). The stored JSON keeps the shapes it had when the
state was a plain dict, because stored runs, the status page (`app/web/figures.py`),
`/metrics` (`app/db/stats.py` reads `reproduction.outcomes`) and `scrub issue --json` read it:

- `repro`, `reported`, `triage`, `findings`, `bisect`: the engine's own types
  (`Repro`, `ReportedError`, `Triage`, `Finding`, `BisectResult`) and their `to_dict()`.
- `reproduction`: `Reproduction`, what `runner.reproduce` found, and `minimized`: `Minimized`,
  what `runner.minimize_repro` kept (null: nothing smaller). Both live in `app.runstate`, where
  the status page and `/metrics` read them through the same classes (`RunView`).
- `stress`: the kit's `StressFinding` (`/scrub stress`: failures per minute, time to the first).
- `publish`: `PublishPlan`, what `publish` will write.

`issue`, `comments` and `candidates` stay GitHub-shaped JSON: the engine reads them as such.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from app.engine.diagnosis.model import DiagnosisReport
from app.engine.issue.markdown import ReportedError, Repro
from app.engine.issue.review import Finding
from app.engine.issue.triage import Triage
from app.engine.verdict.values import StatedValues
from app.engine.verdict.witness import Witness
from app.engine.verdict.bisect import BisectResult
from app.engine.verdict.bisect_probe import ProbePlan
from app.engine.verdict.culprit import Culprit
from app.pipelines.kit.narrowing import Narrowing
from app.pipelines.kit.stress import StressFinding
from app.engine.testgen.issue_test import IssueTest
from app.pipelines.kit.testcheck import TestCheck
from app.pipelines.state import PipelineState, from_known
from app.runstate import Minimized, Reproduction

__all__ = ["IssueState", "Minimized", "PublishPlan", "Reproduction"]

Json = dict[str, Any]
T = TypeVar("T")


@dataclass(frozen=True)
class PublishPlan:
    """What `publish` writes: a comment body (no marker), labels, close; `nothing` for a closed issue."""

    nothing: bool = False
    comment: str | None = None
    add_labels: list[str] = field(default_factory=list)
    remove_labels: list[str] = field(default_factory=list)
    close: bool = False

    def to_dict(self) -> Json:
        if self.nothing:
            return {"nothing": True}
        return {"comment": self.comment, "add_labels": list(self.add_labels),
                "remove_labels": list(self.remove_labels), "close": self.close}

    @classmethod
    def from_dict(cls, data: Json) -> PublishPlan:
        return from_known(cls, data)


@dataclass(frozen=True)
class TestPR:
    """What `/scrub test` did: the pull request, or why there is none."""

    opened: bool
    why: str = ""
    url: str | None = None
    number: int | None = None
    branch: str = ""
    base: str = ""  # the default branch, and its commit the test was placed and verified on
    commit: str = ""
    path: str = ""
    placement: str = ""
    checks: list[TestCheck] = field(default_factory=list)
    lint: str = ""  # what the repository's linter said of the test file

    __test__ = False  # not a pytest class

    _KEYS = ("opened", "why", "url", "number", "branch", "base", "commit", "path", "placement", "lint")

    def to_dict(self) -> Json:
        return {k: getattr(self, k) for k in self._KEYS} | {"checks": [c.to_dict() for c in self.checks]}

    @classmethod
    def from_dict(cls, data: Json) -> TestPR:
        return cls(**{k: data[k] for k in cls._KEYS if k in data},
                   checks=[TestCheck.from_dict(c) for c in data.get("checks") or []])


@dataclass
class IssueState(PipelineState):
    DECODE: ClassVar[dict[str, Callable[[Any], Any]]] = {
        "repro": Repro.from_dict,
        "reported": ReportedError.from_dict,
        "triage": Triage.from_dict,
        "findings": lambda items: [Finding.from_dict(f) for f in items],
        "reproduction": Reproduction.from_dict,
        "bisect": BisectResult.from_dict,
        "bisect_plan": ProbePlan.from_dict,
        "culprit": Culprit.from_dict,
        "narrowing": Narrowing.from_dict,
        "minimized": Minimized.from_dict,
        "publish": PublishPlan.from_dict,
        "alternates": lambda items: [Repro.from_dict(r) for r in items],
        "stated_values": StatedValues.from_dict,
        "witness": Witness.from_dict,
        "stress": StressFinding.from_dict,
        "diagnosis": DiagnosisReport.from_dict,
        "offered_test": IssueTest.from_dict,
        "test_checks": lambda items: [TestCheck.from_dict(c) for c in items],
        "placed_test": IssueTest.from_dict,
        "test_pr": TestPR.from_dict,
    }

    # fetch
    issue: Json = field(default_factory=dict)  # GitHub's issue, slimmed
    comments: list[Json] = field(default_factory=list)
    label_role: str | None = None  # the role of who added the label, when the label started the run
    # select
    repro: Repro | None = None  # triage may replace its source with the CPU part
    candidates: list[Json] = field(default_factory=list)  # {author, url, lines} per candidate
    images_only: bool = False
    reported: ReportedError | None = None
    expected_exception: str | None = None
    trusted: list[str] = field(default_factory=list)  # commenters with triage permission or higher
    alternates: list[Repro] = field(default_factory=list)  # other repro blocks, tried when the first shows nothing
    stated_values: StatedValues | None = None  # "prints X but expected Y"
    reported_version: str | None = None  # the reporter's torch release, when the report gives it
    # triage (`stop` and `verdict` also from reproduce)
    triage: Triage | None = None
    needs_cuda: bool = False
    stop: bool = False
    verdict: str | None = None
    # review
    findings: list[Finding] = field(default_factory=list)
    collaborator: bool = False
    approved_by: str | None = None
    approval_sha256: str | None = None  # the code reviewed: what an approval is of (`app.approvals`)
    # reproduce
    reproduction: Reproduction | None = None
    hardware: str | None = None  # what it needs that no worker has
    witness: Witness | None = None  # for a clean run: what shows this script once failed
    # bisect, minimize
    bisect: BisectResult | None = None
    bisect_plan: ProbePlan | None = None  # the clean runs that made a release "absent"
    culprit: Culprit | None = None  # the range narrowed to nightlies and commits, and the PR
    # bisect, culprit_range, culprit_commits, culprit_pr (`app.pipelines.kit.culprit_stages`)
    narrowing: Narrowing | None = None  # where the culprit search is, between the two sides of the trust split
    minimized: Minimized | None = None
    # stress (`/scrub stress` only)
    stress: StressFinding | None = None
    # diagnose (`diagnosis.py`), test and test_pr (`testcase.py`)
    diagnosis: DiagnosisReport | None = None  # the catalog's patterns and what their experiments showed
    offered_test: IssueTest | None = None  # the repro as a unit test, offered in the comment
    test_checks: list[TestCheck] = field(default_factory=list)  # it failed without its marker, xfailed with it
    placed_test: IssueTest | None = None  # `/scrub test`: the test in the repository's test file
    test_pr: TestPR | None = None  # what `/scrub test` did
    # publish, report
    publish: PublishPlan | None = None
    same_failures: list[Json] = field(default_factory=list)  # other open issues / CI signatures (dedup.py)
    published: list[str] = field(default_factory=list)  # what publish wrote: comment, labels, closed
