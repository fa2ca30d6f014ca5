from app.ci_history import Classification, Occurrence
from app.engine.cilogs.archive import Failure
from app.pipelines.ci_failure.history import record_outcome
from app.pipelines.ci_failure.job import CIJob
from app.pipelines.ci_failure.state import CIState
from app.pipelines.ci_ingest.signatures import MemorySignatureStore
from app.pipelines.memory import MemoryRunContext

FP = "d" * 64


def _store() -> MemorySignatureStore:
    store = MemorySignatureStore()
    store.observe("o/r", Failure(job="j", test="t.py::t", kind="exception", exception="E", message="m", signature=FP), 1)
    store.record_occurrence("o/r", Occurrence(FP, 1, classification=Classification("trunk", True)))
    return store


def test_a_flaky_verdict_and_the_draft_pr_go_into_the_signatures_history():
    store = _store()
    state = CIState(job=CIJob(repo="o/r", test="t.py::t", signature=FP), verdict="flaky",
                    rerun={"runs": 35, "failures": 7}, pr_number=12)
    ctx = MemoryRunContext(run_id=3, signatures=store, params={"fingerprint": FP})
    assert record_outcome(ctx, state) == ["flaky", "PR #12"]
    history = store.history("o/r", FP)
    assert history.flaky and history.flaky_evidence == "the CI job's reruns (run #3): 7/35 failed"
    assert [(link.kind, link.number, link.relation) for link in store._rows[("o/r", FP)].links] == [("pull", 12, "draft PR")]


def test_a_deterministic_job_or_a_dispatch_changes_nothing():
    store = _store()
    job = CIJob(repo="o/r", test="t.py::t", signature=FP)
    assert record_outcome(MemoryRunContext(signatures=store, params={"fingerprint": FP}),
                          CIState(job=job, verdict="deterministic")) == []
    assert record_outcome(MemoryRunContext(signatures=store, params={}), CIState(job=job, verdict="flaky",
                                                                                  rerun={"runs": 2})) == []
    assert record_outcome(MemoryRunContext(params={"fingerprint": FP}), CIState(job=job, verdict="flaky")) == []
    assert not store.history("o/r", FP).flaky
