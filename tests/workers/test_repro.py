"""The repro worker's side: the job's stages on an in-memory context, GitHub reduced to one
read-only clone URL. Real git over HTTP from the fake GitHub."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from app.engine.git.repo import GitError, git, push_branch
from app.pipelines.base import Stage, StageResult
from app.pipelines.kit.checkout import ensure_checkout
from app.settings import Settings
from tests.fakes.ci_project import make_ci_project
from tests.fakes.fake_github import FakeGitHub
from workers.jobs import DoneStage, ReproJob
from workers.repro import NoGitHubHere, RepoAccess, run_job


@dataclass
class At:
    repo: str
    head_sha: str


def job(stage: str, repo: str = "acme/calc", clone_url: str | None = None, **params) -> ReproJob:
    return ReproJob("j1", 5, "test-kind", "repro-cpu", stage, params, 1,
                    [DoneStage("fetch", "done", "fetched", {"fetched": True}, 0.1)], repo=repo, clone_url=clone_url,
                    lease_s=0.6)


def test_github_is_one_clone_url_of_one_repository():
    access = RepoAccess("acme/calc", "https://github.com/acme/calc.git")
    assert access.clone_url("ACME/calc") == "https://github.com/acme/calc.git"
    with pytest.raises(NoGitHubHere, match="only read acme/calc"):
        access.clone_url("acme/other")
    with pytest.raises(NoGitHubHere, match="no GitHub access"):
        access.create_comment("acme/calc", 1, "hi")
    with pytest.raises(NoGitHubHere):  # not an AttributeError: `hasattr` cannot quietly say no
        hasattr(access, "compare_commits")
    with pytest.raises(NoGitHubHere, match="not configured"):
        RepoAccess("acme/calc", None).clone_url("acme/calc")


def test_a_job_checks_out_through_its_clone_url_and_cannot_push_with_it(tmp_path):
    project = make_ci_project(tmp_path / "remote", slow_s=1.0)
    with FakeGitHub() as fake:
        fake.add_repo(project.repo)
        fake.set_private(project.repo)
        fake.serve_git(project.repo, project.bare)
        token = fake.new_installation_token(1, repositories=["calc"], permissions={"contents": "read"})
        url = f"{fake.url}/{project.repo}.git".replace("http://", f"http://x-access-token:{token}@")
        seen: dict = {}

        def checkout(ctx, state):
            seen["state"] = dict(state)
            tree = ensure_checkout(ctx, At(project.repo, project.head_sha))
            git("commit", "--allow-empty", "-qm", "from a repro host", cwd=tree)
            try:
                push_branch(tree, ctx.github.clone_url(project.repo), "scrub/x")
                seen["pushed"] = True
            except GitError as exc:
                seen["push refused"] = str(exc)
            ctx.save_artifact("note.txt", "text", "checked out")
            ctx.log("checked out")
            return StageResult(summary="checked out", output={"head": git("rev-parse", "HEAD~1", cwd=tree).strip()})

        stages = [Stage("fetch", lambda ctx, state: StageResult()), Stage("checkout", checkout, queue=lambda s: "repro-cpu"),
                  Stage("publish", lambda ctx, state: StageResult())]
        beats: list[str] = []
        result = run_job(job("checkout", clone_url=url), Settings(data_dir=tmp_path / "data"), beats.append,
                         stages_for=lambda kind: stages)
    assert result.outcome == "handoff", result.error  # `publish` is the default queue's
    assert [(r.stage, r.status, r.output) for r in result.stages] == [("checkout", "done", {"head": project.head_sha})]
    assert seen["state"] == {"fetched": True} and "pushed" not in seen and "403" in seen["push refused"]
    assert result.artifacts == [("note.txt", "text", "checked out")] and "checked out" in result.log
    assert beats and beats[0] == "checkout"  # it said it was alive, at that stage
    assert token not in json.dumps(result.to_dict())  # what goes back holds no credential


def test_a_stage_error_is_a_failed_result_never_an_exception(tmp_path):
    def boom(ctx, state):
        raise ConnectionError("the mirror's host reset the connection")

    def spawn(ctx, state):
        ctx.enqueue_runs([99])
        return StageResult()

    settings = Settings(data_dir=tmp_path / "data")
    for stage, transient in ((boom, True), (spawn, False)):
        stages = [Stage("fetch", lambda ctx, state: StageResult()), Stage("work", stage, queue=lambda s: "repro-cpu")]
        result = run_job(job("work"), settings, lambda stage: None, stages_for=lambda kind: stages)
        assert (result.outcome, result.transient) == ("failed", transient)
        assert [(r.stage, r.status) for r in result.stages] == [("work", "failed")]
    assert "cannot start runs" in result.error


def test_a_stage_that_reads_github_on_a_repro_worker_is_named_with_where_it_belongs(tmp_path):
    def narrow(ctx, state):
        ctx.github.compare_commits("pytorch/pytorch", "a", "b")
        return StageResult()

    stages = [Stage("fetch", lambda ctx, state: StageResult()),
              Stage("narrow", narrow, queue=lambda s: "repro-cpu", optional=True)]
    result = run_job(job("narrow"), Settings(data_dir=tmp_path / "data"), lambda stage: None,
                     stages_for=lambda kind: stages)
    (record,) = result.stages
    assert (record.stage, record.status) == ("narrow", "failed")
    assert "stage 'narrow' asked GitHub for compare_commits on a repro worker" in record.summary
    assert "belongs in a stage on the default queue" in record.summary
