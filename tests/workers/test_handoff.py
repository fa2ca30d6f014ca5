"""The handoff: what a job carries to a repro worker (never a credential that writes), and a
job the broker refuses leaves the run to the reaper instead of stranding it."""

from __future__ import annotations

import pytest

from app.db import queries
from app.db.models import Run
from app.github.client import GitHubClient
from app.pipelines import registry
from workers.enqueue import RecordingEnqueuer
from workers.execute import WorkerServices, execute_run


class ReadOnly:
    """A GitHub port whose full-rights clone URL must never be asked for by a handoff."""

    def read_clone_url(self, repo: str) -> str:
        return f"https://x-access-token:ghs_readonly@github.com/{repo}.git"

    def clone_url(self, repo: str) -> str:
        raise AssertionError("the handoff asked for the token that writes")


def new_run(database, repo="o/r") -> int:
    with database.session() as session:
        run = queries.create_run(session, kind="selftest", repo=repo, trigger="test", params={"k": "v"})
        session.commit()
        return run.id


def test_the_job_carries_the_runs_state_and_a_read_only_clone_url(database, settings, enqueuer):
    run_id = new_run(database)
    svc = WorkerServices(settings, database, enqueuer, github_for=lambda installation: ReadOnly())
    assert execute_run(run_id, svc) == "handed off to repro-cpu"
    [(job, queue)] = enqueuer.jobs
    assert (job["kind"], job["stage"], job["params"], job["repo"]) == ("selftest", "work", {"k": "v"}, "o/r")
    assert job["clone_url"] == "https://x-access-token:ghs_readonly@github.com/o/r.git"
    assert [(d["stage"], d["output"]) for d in job["done"]] == [("greet", {"greeting": f"hello from run {run_id}"})]
    with database.session() as session:
        stored = session.get(Run, run_id)
    assert stored.lease_owner == f"job:{job['job_id']}" and stored.status == "queued" and queue == "repro-cpu"


def test_token_mode_hands_on_no_credential(database, settings, enqueuer):
    run_id = new_run(database)
    client = GitHubClient(token="ghp_personal_token_of_the_operator", base_url="https://api.github.com")
    svc = WorkerServices(settings, database, enqueuer, github_for=lambda installation: client)
    execute_run(run_id, svc)
    [(job, _)] = enqueuer.jobs
    assert job["clone_url"] == "https://github.com/o/r.git" and "ghp_" not in str(job)


class Down(RecordingEnqueuer):
    def repro_job(self, job, queue, countdown_s=None):
        raise ConnectionError("the broker is restarting")


def test_a_job_the_broker_refuses_leaves_the_run_for_the_reaper(database, settings):
    run_id = new_run(database)
    svc = WorkerServices(settings, database, Down(), github_for=lambda installation: None,
                         stages_for=registry.stages_for)
    with pytest.raises(ConnectionError):
        execute_run(run_id, svc)
    with database.session() as session:
        stored = session.get(Run, run_id)
    assert stored.status == "running" and stored.lease_owner == "reaper"  # expired: the next pass resends it
