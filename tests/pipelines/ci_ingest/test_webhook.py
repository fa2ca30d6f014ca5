"""From a signed `workflow_run` webhook to a counted signature and one CI run, through the API,
the worker's `execute_run` and the fake GitHub serving the jobs, the 302 and the zip."""

from __future__ import annotations

import copy

from sqlmodel import select

from app.db.models import FailureSignature, Run
from app.github.client import GitHubClient
from tests.engine.cilogs.samples import (
    PYTEST_SEGFAULT,
    Job,
    build_archive,
    passing_lines,
    setup_step,
)
from tests.foundation import client, database, deliver, enqueuer, load_payload, settings  # noqa: F401
from workers.execute import WorkerServices, execute_run


def _failed_run_payload(webhook_fixtures, run_id: int) -> dict:
    payload = copy.deepcopy(load_payload(webhook_fixtures, "workflow_run/completed.payload.json"))
    run = payload["workflow_run"]
    run["conclusion"] = "failure"  # upstream has no failure example: derive one
    run["id"] = run_id
    run["html_url"] = f"https://github.com/{payload['repository']['full_name']}/actions/runs/{run_id}"
    return payload


def _seed_failed_run(gh, repo: str, run_id: int, shard: int) -> None:
    job = Job(f"test (default, {shard}, 2)")
    setup_step(job).step("Test", passing_lines(40) + PYTEST_SEGFAULT, exit_code=139)
    gh.add_workflow_run(repo, run_id, jobs=[{"name": job.name, "conclusion": "failure"}], logs_zip=build_archive([job]))


def _runs(db, kind: str) -> list[Run]:
    with db.session() as session:
        return list(session.exec(select(Run).where(Run.kind == kind)))


def test_two_failed_runs_through_the_webhook_open_one_ci_run(
    client, database, enqueuer, settings, fake_github, webhook_fixtures  # noqa: F811
):
    repo = "octo-org/octo-repo"
    services = WorkerServices(
        settings=settings, database=database, enqueuer=enqueuer,
        github_for=lambda installation_id: GitHubClient(token="t", base_url=fake_github.url),
    )
    for run_id, shard in ((9001, 1), (9002, 2), (9003, 1)):
        _seed_failed_run(fake_github, repo, run_id, shard)
        assert deliver(client, "workflow_run", _failed_run_payload(webhook_fixtures, run_id)).status_code == 202
        ingest_id, _ = enqueuer.runs[-1]
        assert execute_run(ingest_id, services) == "succeeded"

    assert len(_runs(database, "ci_ingest")) == 3
    [ci_run] = _runs(database, "ci_failure")
    assert ci_run.repo == repo and ci_run.target.endswith("/actions/runs/9002")
    assert ci_run.params["failure"]["test"] == "test/test_ops.py::test_crash"
    assert ci_run.params["failure"]["kind"] == "signal" and ci_run.params["workflow_run_ids"] == [9001, 9002]
    with database.session() as session:
        [signature] = session.exec(select(FailureSignature)).all()
    assert (signature.count, signature.run_ids, signature.linked_run_id) == (3, [9001, 9002, 9003], ci_run.id)
    assert signature.test_id == "test/test_ops.py::test_crash" and signature.exception == "SIGSEGV"
    paths = [r.path for r in fake_github.requests]
    assert f"/repos/{repo}/actions/runs/9001/attempts/1/logs" in paths  # answered 302 ...
    blob_fetches = [r for r in fake_github.requests if r.path.startswith("/_blobs/")]
    assert len(blob_fetches) == 3 and {r.auth for r in blob_fetches} == {"none"}  # ... zip fetched without our token
