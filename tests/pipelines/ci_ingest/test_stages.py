"""`ci_ingest` end to end over the fake GitHub: jobs, the 302, the zip; counting; one CI run.

`fake_github` is the fixture of tests/pipelines/conftest.py.
"""

from __future__ import annotations

import json
import threading

import pytest
from sqlmodel import SQLModel, select

from app.db.models import FailureSignature, Run
from app.db.session import Database
from app.db.signatures import DbSignatureStore
from app.engine.cilogs.archive import Failure
from app.github.client import GitHubClient
from app.pipelines.ci_ingest import stages as ci_ingest
from app.pipelines.base import run_pipeline
from app.pipelines.ci_ingest.signatures import MemorySignatureStore
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings
from tests.engine.cilogs.samples import (
    PYTEST_FAILURES,
    Job,
    build_archive,
    passing_lines,
    setup_step,
)

REPO = "pytorch/vision"


def _test_job(shard: int) -> Job:
    job = Job(f"linux / test (default, {shard}, 3, linux.2xlarge)")
    return setup_step(job).step("Test", passing_lines(50) + PYTEST_FAILURES, exit_code=1)


def _seed(gh, run_id: int, shard: int) -> None:
    job = _test_job(shard)
    gh.add_workflow_run(
        REPO, run_id, name="CI", head_branch="main",
        jobs=[{"name": job.name, "conclusion": "failure"}, {"name": "lint", "conclusion": "success"}],
        logs_zip=build_archive([job, setup_step(Job("lint")).step("Lint", ["FAILED test/test_style.py::test_pep8 - AssertionError: E501"])]),
    )


def _ingest(gh, store, run_id: int, tmp_path, threshold: int = 2) -> MemoryRunContext:
    ctx = MemoryRunContext(
        run_id=run_id * 10,
        github=GitHubClient(token=gh.token or "t", base_url=gh.url),
        settings=Settings(data_dir=tmp_path / "data", ci_repeat_threshold=threshold),
        params={"repo": REPO, "workflow_run_id": run_id, "run_attempt": 1, "name": "CI",
                "url": f"https://github.com/{REPO}/actions/runs/{run_id}", "event": "push",
                "head_branch": "main", "default_branch": "main", "head_repository": REPO},
        signatures=store,
    )
    result = run_pipeline(ci_ingest.STAGES, ctx, any_queue=True)
    assert result.status == "succeeded", ctx.lines
    return ctx


def _spawned(ctx: MemoryRunContext) -> list[int]:
    listed = ctx.completed_stages()["record"]["spawned_runs"]
    assert ctx.enqueued == listed  # what the stage opened is what it asked to start
    return listed


def test_a_failure_repeated_in_two_runs_opens_one_ci_run_and_a_third_opens_none(fake_github, tmp_path):
    store = MemorySignatureStore()
    for run_id, shard in ((101, 1), (102, 3), (103, 2)):  # shards move between runs
        _seed(fake_github, run_id, shard)

    first = _ingest(fake_github, store, 101, tmp_path)
    second = _ingest(fake_github, store, 102, tmp_path)
    third = _ingest(fake_github, store, 103, tmp_path)

    assert _spawned(first) == [] and _spawned(third) == []
    assert len(_spawned(second)) == 2  # both failing tests repeated; one CI run each
    assert len(store.opened) == 2
    run_id, target, params = store.opened[0]
    assert target == f"https://github.com/{REPO}/actions/runs/102"
    assert params["workflow_run_ids"] == [101, 102] and params["count"] == 2
    assert Failure.from_dict(params["failure"]).test == "test/test_nn.py::TestNN::test_embedding"
    rows = json.loads(third.artifacts["failures.json"][1])["failures"]
    assert [(r["test"], r["count"]) for r in rows] == [
        ("test/test_nn.py::TestNN::test_embedding", 3), ("test/test_nn.py::test_add", 3)]
    assert {r["linked_run_id"] for r in rows} == {opened[0] for opened in store.opened}
    assert "| 3 |" in third.artifacts["failures.md"][1]


def test_ingesting_the_same_run_twice_counts_it_once(fake_github, tmp_path):
    store = MemorySignatureStore()
    _seed(fake_github, 201, 1)
    _ingest(fake_github, store, 201, tmp_path)
    again = _ingest(fake_github, store, 201, tmp_path)
    assert _spawned(again) == [] and store.opened == []
    assert {s["count"] for s in again.completed_stages()["record"]["signatures"]} == {1}


def test_fetch_follows_the_redirect_and_keeps_failed_jobs_only(fake_github, tmp_path):
    _seed(fake_github, 301, 1)
    ctx = _ingest(fake_github, MemorySignatureStore(), 301, tmp_path)
    fetched = ctx.completed_stages()["fetch"]
    assert fetched["logs_path"].endswith("run-301-attempt-1.zip")
    failures = ctx.completed_stages()["parse"]["failures"]
    assert {f["job"] for f in failures} == {"linux / test (default, 1, 3, linux.2xlarge)"}  # not lint


@pytest.fixture
def database(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'scrub.db'}")
    SQLModel.metadata.create_all(db.engine)
    yield db
    db.dispose()


def _failure(signature: str = "f" * 64) -> Failure:
    return Failure(job="test", test="t.py::test_x", kind="exception", exception="RuntimeError",
                   message="boom", signature=signature)


def test_db_store_counts_distinct_runs_and_links_one_run_under_a_race(database):
    store = DbSignatureStore(database)
    failure, workers = _failure(), 8
    barrier = threading.Barrier(workers)
    opened: list[int | None] = []

    def ingest(workflow_run_id: int) -> None:
        barrier.wait()
        seen = store.observe("o/r", failure, workflow_run_id)
        store.observe("o/r", failure, workflow_run_id)  # a retried ingest
        if seen.should_open(2):
            opened.append(store.open_ci_run("o/r", failure.signature, target="u", params={"n": workflow_run_id}))

    threads = [threading.Thread(target=ingest, args=(1000 + i,)) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    with database.session() as session:
        [row] = session.exec(select(FailureSignature)).all()
        runs = session.exec(select(Run)).all()
    assert row.count == workers and sorted(row.run_ids) == [1000 + i for i in range(workers)]
    assert len(runs) == 1 and runs[0].kind == "ci_failure" and runs[0].trigger == "ci_repeat"
    assert row.linked_run_id == runs[0].id
    assert [r for r in opened if r is not None] == [runs[0].id]
