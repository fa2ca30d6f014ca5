"""CI failures classified before a job opens, end to end: signed `workflow_run` deliveries (the
real payload shape) through the API, the worker's `execute_run`, the fake GitHub (its runs,
issues, compare API and git) and the database. Broken trunk, a flaky signature, an unstable
job; and the trunk failures that do open a job (its draft PR based on the default branch)."""

from __future__ import annotations

from sqlmodel import select

from app.db import queries
from app.db.models import FailureOccurrence, FailureSignature, Run
from app.github.client import GitHubClient
from tests.fakes.ci_project import _git, make_ci_project
from tests.foundation import client, database, deliver, enqueuer, settings  # noqa: F401
from tests.reliability.fork_project import failing_archive, run_payload
from workers.execute import WorkerServices, execute_run

REPO = "acme/calc"


class World:
    def __init__(self, fake, tmp_path, client, database, enqueuer, settings):  # noqa: F811
        self.fake, self.client, self.database, self.enqueuer = fake, client, database, enqueuer
        self.project = make_ci_project(tmp_path / "remote", slow_s=1.0)
        fake.add_repo(REPO)
        fake.serve_git(REPO, self.project.bare)
        self.services = WorkerServices(settings=settings, database=database, enqueuer=enqueuer,
                                       github_for=lambda _: GitHubClient(token="t", base_url=fake.url))
        self.tmp = tmp_path

    def branch(self, name: str) -> str:
        """A same-repository branch with one commit on top of main; its head."""
        src = self.tmp / f"clone-{name.replace('/', '-')}"
        _git(self.tmp, "clone", "--quiet", str(self.project.bare), str(src))
        (src / f"{name.replace('/', '_')}.txt").write_text(name)
        _git(src, "add", ".")
        _git(src, "commit", "--quiet", "-m", name, author="Ada Lovelace|ada@example.com")
        _git(src, "push", "--quiet", "origin", f"HEAD:refs/heads/{name}")
        return _git(src, "rev-parse", "HEAD")

    def fail(self, run_id: int, *, job: str, line: str, event: str = "push", branch: str = "main",
             sha: str | None = None, attempt: int = 1) -> dict:
        sha = sha or self.project.head_sha
        self.fake.add_workflow_run(REPO, run_id, head_sha=sha, head_branch=branch, event=event, run_attempt=attempt,
                                   jobs=[{"name": job, "conclusion": "failure"}], logs_zip=failing_archive(job, line))
        return self.deliver(run_payload(REPO, run_id, head_sha=sha, head_repo=REPO, event=event, head_branch=branch,
                                        attempt=attempt))

    def deliver(self, payload: dict) -> dict:
        answer = deliver(self.client, "workflow_run", payload)
        assert answer.status_code == 202, answer.text
        ingest_id = answer.json()["run_id"]
        assert execute_run(ingest_id, self.services) == "succeeded"
        with self.database.session() as session:
            record = next(e for e in queries.stage_events(session, ingest_id) if e.stage == "record")
            return record.output

    def jobs(self) -> list[Run]:
        with self.database.session() as session:
            return list(session.exec(select(Run).where(Run.kind == "ci_failure")))

    def occurrences(self) -> list[FailureOccurrence]:
        with self.database.session() as session:
            return list(session.exec(select(FailureOccurrence).order_by(FailureOccurrence.id)))


def _world(fake_github, tmp_path, client, database, enqueuer, settings) -> World:  # noqa: F811
    return World(fake_github, tmp_path, client, database, enqueuer, settings)


LINE_A = "FAILED tests/test_calc.py::test_divide_by_zero - ZeroDivisionError: division by zero"
LINE_B = "FAILED tests/test_cache.py::test_cache_refresh - AssertionError: cache returned a stale entry"


def _labels(output: dict) -> list[str]:
    return [s["classification"]["label"] for s in output["signatures"]]


def test_a_pr_failure_that_trunk_shares_is_broken_trunk_and_two_trunk_failures_open_the_job(
        fake_github, tmp_path, client, database, enqueuer, settings):  # noqa: F811
    world = _world(fake_github, tmp_path, client, database, enqueuer, settings)
    trunk = world.fail(801, job="tests (3.11)", line=LINE_A)
    assert _labels(trunk) == ["trunk"] and "1 of the 2 trunk runs" in trunk["signatures"][0]["decision"]
    head = world.branch("fix-calc")  # branched off main, where trunk fails: the merge base
    for run_id in (802, 803):
        pr = world.fail(run_id, job="tests (3.11)", line=LINE_A, event="pull_request", branch="fix-calc", sha=head)
        assert _labels(pr) == ["broken trunk"], pr
        evidence = " ".join(pr["signatures"][0]["classification"]["evidence"])
        assert f"merge base {world.project.head_sha[:12]}" in evidence
        assert pr["signatures"][0]["decision"].startswith("broken trunk: attributed to trunk")
    assert world.jobs() == []  # two PR runs failed, but the failure is trunk's
    again = world.fail(804, job="tests (3.11)", line=LINE_A)
    [job] = world.jobs()
    assert again["spawned_runs"] == [job.id] and "2 trunk runs" in job.params["why"]
    assert job.params["workflow_run"]["head_branch"] == "main" and job.params["classification"]["label"] == "trunk"
    assert job.params["workflow_run"]["default_branch"] == "main"
    assert [o.label for o in world.occurrences()] == ["trunk", "broken trunk", "broken trunk", "trunk"]
    compares = [r.path for r in fake_github.requests if "/compare/" in r.path]
    assert compares == [f"/repos/{REPO}/compare/main...{head}"] * 2  # asked only for PR runs trunk shares


def test_a_pr_failure_that_passed_on_rerun_makes_its_signature_flaky_and_opens_nothing(
        fake_github, tmp_path, client, database, enqueuer, settings):  # noqa: F811
    world = _world(fake_github, tmp_path, client, database, enqueuer, settings)
    head = world.branch("cache-work")
    first = world.fail(811, job="tests (3.11)", line=LINE_B, event="pull_request", branch="cache-work", sha=head)
    assert _labels(first) == ["pr"]
    # The author reruns the failed jobs: attempt 2 passes. GitHub sends workflow_run.completed.
    fake_github.add_workflow_run(REPO, 811, head_sha=head, head_branch="cache-work", event="pull_request",
                                 run_attempt=2, conclusion="success")
    passed = world.deliver(run_payload(REPO, 811, head_sha=head, head_repo=REPO, head_branch="cache-work",
                                       attempt=2, conclusion="success"))
    assert passed["verdict"].startswith("attempt 2 passed: 1 signature(s)")
    with database.session() as session:
        [signature] = session.exec(select(FailureSignature)).all()
    assert signature.flaky and "attempt 1 of workflow run 811" in signature.flaky_evidence
    second = world.fail(812, job="tests (3.11)", line=LINE_B, event="pull_request", branch="cache-work", sha=head)
    assert _labels(second) == ["flaky"] and "known flaky" in second["signatures"][0]["decision"]
    assert world.jobs() == []
    assert [o.passed_on_rerun for o in world.occurrences()] == [True, False]


def test_an_unstable_job_never_opens_a_job_even_on_trunk(
        fake_github, tmp_path, client, database, enqueuer, settings):  # noqa: F811
    world = _world(fake_github, tmp_path, client, database, enqueuer, settings)
    fake_github.add_issue(REPO, title="UNSTABLE CI / tests (3.12)", labels=["unstable"])
    for run_id in (821, 822):
        by_issue = world.fail(run_id, job="tests (3.12)", line=LINE_A)
        assert _labels(by_issue) == ["unstable"], by_issue
        by_name = world.fail(run_id + 10, job="tests (3.11, unstable)", line=LINE_A)
        assert _labels(by_name) == ["unstable"]
    assert world.jobs() == []
    evidence = " ".join(by_issue["signatures"][0]["classification"]["evidence"])
    assert "UNSTABLE CI / tests (3.12)" in evidence
