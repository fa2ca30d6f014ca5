"""The history port over the database: idempotent occurrences and links, reruns that pass,
issue-side signatures, matching by error."""

from __future__ import annotations

from app.ci_history import Classification, Occurrence, SignatureLink
from app.db.signature_history import issue_fingerprint
from app.db.signatures import DbSignatureStore
from app.engine.cilogs.archive import Failure
from tests.foundation import migrated_database

REPO = "acme/calc"
KEY = "ZeroDivisionError: division by zero"


def _store(tmp_path) -> DbSignatureStore:
    return DbSignatureStore(migrated_database(f"sqlite:///{tmp_path / 'scrub.db'}"))


def _failure(fp: str = "a" * 64) -> Failure:
    return Failure(job="tests", test="t.py::test_div", kind="exception", exception="ZeroDivisionError",
                   message="division by zero", signature=fp)


def _occurrence(run_id: int, attempt: int = 1, fp: str = "a" * 64) -> Occurrence:
    return Occurrence(fp, run_id, attempt=attempt, head_branch="fix", event="pull_request", head_repo=REPO,
                      classification=Classification("pr", True))


def test_occurrences_are_kept_once_and_a_passing_rerun_makes_the_signature_flaky(tmp_path):
    store = _store(tmp_path)
    store.observe(REPO, _failure(), 1)
    for _ in range(2):  # a retried ingest records nothing twice
        store.record_occurrence(REPO, _occurrence(1), KEY)
    store.record_occurrence(REPO, _occurrence(1, attempt=2), KEY)
    history = store.history(REPO, "a" * 64)
    assert [(o.workflow_run_id, o.attempt) for o in history.occurrences] == [(1, 1), (1, 2)]
    assert not history.flaky and history.occurrences[0].classification.label == "pr"
    assert store.mark_passed_on_rerun(REPO, 1, 3) == ["a" * 64]
    assert store.mark_passed_on_rerun(REPO, 99, 2) == []
    history = store.history(REPO, "a" * 64)
    assert history.flaky and history.flaky_evidence == "failed in attempt 1 of workflow run 1, passed in attempt 3"
    assert all(o.passed_on_rerun for o in history.occurrences)


def test_links_are_kept_once_and_issue_signatures_match_ci_ones_by_error(tmp_path):
    store = _store(tmp_path)
    store.observe(REPO, _failure(), 1)
    store.record_occurrence(REPO, _occurrence(1), KEY)
    fp = store.observe_issue(REPO, KEY, "ZeroDivisionError", "division by zero")
    assert fp == issue_fingerprint(REPO, KEY) and store.observe_issue(REPO, KEY, "x", "y") == fp
    store.link(REPO, fp, SignatureLink("issue", 5, "first title", None, "reported"))
    store.link(REPO, fp, SignatureLink("issue", 5, "renamed", None, "reported"))
    matches = {m.source: m for m in store.find_by_error(REPO, KEY)}
    assert set(matches) == {"ci", "issue"} and matches["ci"].fingerprint == "a" * 64
    assert [(link.number, link.title) for link in matches["issue"].links] == [(5, "renamed")]
    assert store.find_by_error(REPO, "") == [] and store.find_by_error("other/repo", KEY) == []
    store.mark_flaky(REPO, "a" * 64, "the CI job's reruns: 3/20 failed")
    assert store.history(REPO, "a" * 64).flaky_evidence == "the CI job's reruns: 3/20 failed"
