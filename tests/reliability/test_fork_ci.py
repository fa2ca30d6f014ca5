"""A fork's pull request cannot make Scrubbot check out, run the fix command on, or push its
commits (issue #21, finding 1).

Through a real `scrub serve` (its worker included) and the fake GitHub: two signed
`workflow_run` deliveries of a fork PR's failing run (the real payload shape: `event:
pull_request`, `head_repository` the fork, the head commit only at `refs/pull/N/head`). The
failures are recorded and classified `fork`; no CI job opens, nothing is checked out or
pushed, no draft PR, the fix command never runs.
"""

from __future__ import annotations

import subprocess

from tests.fakes.ci_project import make_ci_project
from tests.reliability.fork_project import (
    add_fork_pull,
    failing_archive,
    fork_run_payload,
)
from tests.reliability.serve import start_serve, stop_serve


def _heads(bare) -> list[str]:
    out = subprocess.run(["git", "for-each-ref", "--format=%(refname)", "refs/heads"], cwd=bare,
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def test_a_fork_prs_failures_are_recorded_but_never_checked_out_pushed_or_fixed(fake_github, tmp_path):
    project = make_ci_project(tmp_path / "remote", slow_s=1.0)
    fork_sha = add_fork_pull(project, 7, tmp_path)
    fake_github.add_repo(project.repo)
    fake_github.serve_git(project.repo, project.bare)
    for run_id in (501, 502):
        fake_github.add_workflow_run(project.repo, run_id, head_sha=fork_sha, head_branch="patch-1",
                                     event="pull_request", jobs=[{"name": "tests (3.11)", "conclusion": "failure"}],
                                     logs_zip=failing_archive())
    marker = tmp_path / "fix-command-ran"
    serve = start_serve(tmp_path, fake_github.url, SCRUB_FIX_COMMAND=f"touch {marker}")
    try:
        ingests = []
        for run_id in (501, 502):
            answer = serve.post_webhook("workflow_run", fork_run_payload(project.repo, run_id, fork_sha))
            assert answer.status_code == 202, answer.text
            ingests.append(serve.wait_for_run(answer.json()["run_id"]))
        runs = serve.get("/api/v1/runs").json()
    finally:
        stop_serve(serve)

    assert [r["status"] for r in ingests] == ["succeeded", "succeeded"], ingests
    assert [r["kind"] for r in runs if r["kind"] != "ci_ingest"] == [], runs  # no CI job opened
    assert _heads(project.bare) == ["refs/heads/main"]  # nothing pushed upstream
    assert not fake_github.writes_to("POST", "/pulls") and not fake_github.writes
    assert not marker.exists()
    worktrees = tmp_path / "data" / "git" / "worktrees"
    assert not worktrees.exists() or not any(worktrees.iterdir())
    # Recorded and reported: both failures are on the run pages, classified as a fork's.
    for ingest in ingests:
        record = next(s for s in ingest["stages"] if s["stage"] == "record")["output"]
        assert [c["classification"]["label"] for c in record["signatures"]] == ["fork"], record
        assert record["signatures"][0]["count"] == ingests.index(ingest) + 1
        assert "fork" in record["signatures"][0]["decision"]


def test_a_job_that_names_a_forks_commit_refuses_it_whatever_its_parameters_say(fake_github, tmp_path):
    """Defence in depth: a CI job whose parameters claim a same-repository run of the fork's
    commit (or a dispatch that points at a fork PR's run) stops at the checkout: nothing is run,
    fixed or pushed, and the report says why."""
    from app.github.client import GitHubClient
    from app.pipelines.base import run_pipeline
    from app.pipelines.ci_failure.stages import STAGES
    from app.pipelines.memory import MemoryRunContext
    from app.settings import Settings
    from tests.fakes.ci_project import DETERMINISTIC_TEST
    from tests.pipelines.conftest import ci_params

    project = make_ci_project(tmp_path / "remote", slow_s=1.0)
    fork_sha = add_fork_pull(project, 9, tmp_path)
    fake_github.add_repo(project.repo)
    client = GitHubClient(token="t", base_url=fake_github.url, clone_urls={project.repo: project.bare})
    params = ci_params(project, DETERMINISTIC_TEST, "ZeroDivisionError", "division by zero")
    params["workflow_run"] |= {"head_sha": fork_sha, "event": "push", "head_repository": project.repo}
    marker = tmp_path / "fix-command-ran"
    ctx = MemoryRunContext(run_id=1, github=client, params=params,
                           settings=Settings(data_dir=tmp_path / "data", fix_command=f"touch {marker}"))
    finished = run_pipeline(STAGES, ctx, any_queue=True)

    checkout = ctx.completed_stages()["checkout"]
    assert checkout["halt"]["reason"].startswith("checkout failed: commit"), checkout
    assert "on no branch" in checkout["halt"]["reason"]
    assert finished.status == "failed" and "on no branch" in ctx.artifacts["report.md"][1]
    assert _heads(project.bare) == ["refs/heads/main"] and not fake_github.writes
    assert not marker.exists()
    assert not (tmp_path / "data" / "git" / "worktrees" / "run-1").exists()
