"""The build of the commit under test, end to end through the CI job: a pytorch-like history,
fake nightlies on a PEP 503 index on loopback (tests/fakes/torch_nightlies.py), the sandbox."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app.engine.envs import BuildPlan
from app.github.client import GitHubClient
from app.pipelines.base import run_pipeline
from app.pipelines.ci_failure.stages import STAGES
from app.pipelines.kit.build import describe, interpreter_build, plan_of
from app.pipelines.kit.sandbox import sandbox_spec
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings
from tests.engine.sandbox.helpers import needs_bwrap
from tests.fakes.ci_project import _git
from tests.fakes.fake_github import fake_github  # noqa: F401  (pytest fixture)
from tests.fakes.torch_nightlies import WheelIndex, _commit, make_pytorch_history, nightly_wheels

REPO = "pytorch/pytorch"
KERNEL_TEST = '''\
import torch


def test_kernel_is_the_release():
    assert torch.KERNEL == "kernel of 2.14.0"
'''


@pytest.fixture(scope="module")
def history_world(tmp_path_factory):
    """The history, plus `feature`: c3 + a test of the kernel (a test-only change), a day later."""
    tmp = tmp_path_factory.mktemp("history")
    history = make_pytorch_history(tmp)
    src = tmp / "pytorch-src"
    _git(src, "checkout", "--quiet", "-b", "feature", history.commits["c3"])
    feature = _commit(src, {"test/test_kernel.py": KERNEL_TEST}, "feature: test the kernel", "2026-01-04")
    _git(src, "push", "--quiet", str(history.bare), "feature")
    with WheelIndex(nightly_wheels(history, tmp / "index")) as index:
        yield history, feature, index


def _ci_run(tmp_path, github, history, index, commit: str, test: str, exception: str, message: str):
    github.add_repo(REPO)
    client = GitHubClient(token="ghp_test", base_url=github.url, clone_urls={REPO: history.bare})
    params = {"repo": REPO, "fingerprint": "f" * 64,
              "failure": {"job": "linux-jammy-py3.11 / test", "test": test, "kind": "exception",
                          "exception": exception, "message": message, "signature": "f" * 64},
              "workflow_run": {"id": 7, "head_sha": commit, "head_branch": "main",
                               "html_url": f"https://github.com/{REPO}/actions/runs/7"}}
    ctx = MemoryRunContext(run_id=1, github=client, params=params,
                           settings=Settings(data_dir=tmp_path / "data", torch_nightly_index_url=index.url))
    finished = run_pipeline(STAGES, ctx, any_queue=True)
    return ctx, finished, {k: v for out in ctx.completed_stages().values() for k, v in out.items()}


@needs_bwrap
def test_the_ci_job_reruns_the_failing_test_on_the_commits_nightly_and_says_so(tmp_path, fake_github,  # noqa: F811
                                                                               history_world):
    history, feature, index = history_world
    ctx, finished, state = _ci_run(tmp_path, fake_github, history, index, feature,
                                   "test/test_kernel.py::test_kernel_is_the_release", "AssertionError",
                                   "assert 'kernel of 2.14.0.dev20260104+cpu' == 'kernel of 2.14.0'")
    assert finished.status == "succeeded", ctx.lines
    build = plan_of(state["build"])
    assert (build.outcome, build.version, build.base, build.distance, build.overlay) == (
        "nightly", "2.14.0.dev20260104+cpu", history.commits["c3"], 1, [])
    # The reruns ran the checkout's test over the nightly's compiled part, not the worker's torch.
    assert state["verdict"] == "deterministic"
    assert "kernel of 2.14.0.dev20260104+cpu" in state["rerun_output"]
    line = describe(state["build"])
    assert line.startswith(f"torch 2.14.0.dev20260104+cpu (git_version {history.nightly_commit[:12]}, cpu, nightly)")
    assert "no overlay" in line
    report = ctx.artifacts["report.md"][1]
    assert f"**Build**: {line}" in report and "| build | done |" in report
    body = fake_github.writes_to("POST", "/pulls")[0].json["body"]
    assert f"**Build**: {line}" in body
    message = _git(history.bare, "log", "-1", "--format=%B", state["commits"][0])
    assert f"Build: {line}" in message


def test_a_commit_whose_compiled_sources_changed_since_the_nightly_is_needs_build(tmp_path, fake_github,  # noqa: F811
                                                                                  history_world):
    history, _, index = history_world
    ctx, finished, state = _ci_run(tmp_path, fake_github, history, index, history.commits["c4"],
                                   "test/test_scale.py::test_scale", "AssertionError", "assert 3 == 2")
    assert finished.status == "failed"
    assert state["verdict"] == "needs-build" and state["build"]["outcome"] == "needs-build"
    assert "aten/src/scale.cpp" in state["halt"]["reason"] and state["halt"]["reason"].startswith("needs-build:")
    ran = {r.stage: r.status for r in ctx.stages}
    assert ran["rerun"] == "skipped" and ran["test"] == "skipped"  # nothing ran on another build
    report = ctx.artifacts["report.md"][1]
    assert "**Verdict**: needs-build" in report and "SCRUB_BUILD_COMMAND" in report


def test_the_kept_plan_gives_every_run_its_interpreter_environment_and_binds(tmp_path):
    ctx = MemoryRunContext(run_id=1, github=None, params={}, settings=Settings(data_dir=tmp_path))
    spec, binds = sandbox_spec(ctx, None, env={"PYTHONHASHSEED": "0"})
    assert spec.python == sys.executable and binds == {} and spec.env == {"PYTHONHASHSEED": "0"}
    env = tmp_path / "envs" / "2.14.0+cpu"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").symlink_to(sys.executable)
    site = env / "lib" / "python3.11" / "site-packages" / "torch"
    (site / "lib").mkdir(parents=True)
    (site / "version.py").write_text("__version__ = '2.14.0+cpu'\ngit_version = 'abc'\n")
    release = BuildPlan("release", version="2.14.0+cpu", git_version="c" * 40, variant="cpu", base="c" * 40,
                        python=str(env / "bin" / "python")).to_dict()
    spec, binds = sandbox_spec(ctx, release)
    assert spec.python == str(env / "bin" / "python") and spec.env == {"PYTHONPATH": "/tmp/work"}
    assert binds == {"torch/lib": str(site / "lib"), "torch/version.py": str(site / "version.py")}


def test_the_workers_own_torch_is_read_from_its_version_file():
    own = interpreter_build()
    found = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__, torch.version.git_version)"],
                           capture_output=True, text=True, check=True).stdout.split()
    assert own is not None and [own.version, own.git_version] == found


def test_on_a_gpu_worker_the_build_line_names_the_gpu():
    build = {**BuildPlan("nightly", version="2.14.0.dev20260104+cu126", git_version="a" * 40, variant="cu126",
                         base="b" * 40).to_dict(), "gpu": "1 x NVIDIA H200 (driver 570.124.06, CUDA 12.8 supported)"}
    line = describe(build)
    assert line.startswith("torch 2.14.0.dev20260104+cu126 (git_version aaaaaaaaaaaa, cu126, nightly)")
    assert line.endswith("; GPU: 1 x NVIDIA H200 (driver 570.124.06, CUDA 12.8 supported)")
    assert plan_of(build).variant == "cu126"  # the extra key does not disturb the plan


def test_a_run_stored_before_builds_existed_keeps_running_as_it_started(tmp_path):
    from app.pipelines.kit.build import build_stage
    from app.pipelines.memory import StageRecord

    ctx = MemoryRunContext(run_id=1, github=None, params={}, settings=Settings(data_dir=tmp_path))
    ctx.stages = [StageRecord("rerun", "done", output={"verdict": "deterministic"})]

    class Job:
        repo, head_sha = REPO, "c" * 40

    result = build_stage(ctx, Job(), next_stage="rerun")
    assert result.skipped and "before builds were chosen" in result.summary and result.output == {}
