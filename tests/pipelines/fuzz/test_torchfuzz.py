"""The fuzz job on programs the real TorchFuzz printed (replayed by a stand-in fuzzer in a
PyTorch-shaped repository: tests/fakes/torchfuzz_project.py), on the worker's torch and devices."""

from __future__ import annotations

import pytest

from app.github.client import GitHubClient
from app.pipelines.base import run_pipeline
from app.pipelines.fuzz.stages import STAGES
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings
from tests.fakes.fake_github import fake_github  # noqa: F401  (pytest fixture)
from tests.fakes.torchfuzz_project import make_torchfuzz_project


@pytest.fixture
def torchfuzz_world(tmp_path, fake_github):  # noqa: F811
    def run(params: dict, scrub_yml: str | None = None, **settings):
        extra = {} if scrub_yml is None else {"scrub_yml": scrub_yml}
        project = make_torchfuzz_project(tmp_path / "remote", **extra)
        fake_github.add_repo(project.repo)
        client = GitHubClient(token="ghp_test", base_url=fake_github.url, clone_urls={project.repo: project.bare})
        ctx = MemoryRunContext(run_id=1, github=client, params={"repo": project.repo, **params},
                               settings=Settings(data_dir=tmp_path / "data", **settings))
        finished = run_pipeline(STAGES, ctx, any_queue=True)
        state = {k: v for out in ctx.completed_stages().values() for k, v in out.items()}
        return ctx, finished, state

    return run


def test_a_real_torchfuzz_generator_bug_on_a_cpu_worker_is_reported_as_one_and_files_no_test(torchfuzz_world):
    ctx, finished, state = torchfuzz_world({"fuzz-seed": "9"})
    assert finished.status == "failed", ctx.lines
    # The fuzzer ran its program on the template's `cuda`, which a CPU build lacks: no bug, and
    # not the error to look for.
    assert state["fuzz_triage"]["verdict"] == "device-unavailable" and state["fuzz_error"] == ""
    assert "Torch not compiled with CUDA enabled" in state["fuzz_output"]
    # Reproduced on the devices this worker has (cpu only); cuda is reported, not run.
    assert [d["device"] for d in state["devices"]] == ["cpu"]
    assert "no GPU" in state["skipped_devices"]["cuda"]
    # A float used as an index in eager mode: an invalid program (a generator bug), not a torch bug.
    assert state["error"] == "RuntimeError: gather(): Expected dtype int32/int64 for index"
    assert (state["triage"]["phase"], state["triage"]["verdict"]) == ("eager", "invalid-program")
    assert state["triage"]["operators"][0] == "gather"
    assert state["halt"]["reason"].startswith("generator bug:")
    skipped = [r.stage for r in ctx.stages if r.status == "skipped"]
    assert {"minimize", "test", "publish"} <= set(skipped) and "generated" not in state
    report = ctx.artifacts["report.md"][1]
    assert "**Status**: Failed — generator bug, no test filed: RuntimeError: gather(): Expected dtype int32/int64 " \
        "for index on cpu (eager)" in report and "int<n>" not in report
    assert "Report the generator bug" in report and "Not run on cuda" in report
    assert "the worker's interpreter, torch 2." in report  # the build that ran it, stated
    assert "PYTHONHASHSEED=0 setarch -R python tools/experimental/torchfuzz/fuzzer.py --seed 9" in report
    assert ctx.artifacts["fuzzed_program.py"][1].startswith("import torch\ntorch.set_default_device('cuda')")


def test_a_fuzzer_that_does_not_start_is_an_error_not_a_clean_seed(torchfuzz_world):
    # The seed's own doc names `torchfuzz.py`, a file TorchFuzz does not have.
    ctx, finished, state = torchfuzz_world(
        {"fuzz-seed": "9"}, scrub_yml="fuzz:\n  command: python tools/experimental/torchfuzz/torchfuzz.py --seed {seed}\n")
    assert finished.status == "failed"
    reason = state["halt"]["reason"]
    assert reason.startswith("the fuzzer did not run (exit code 2") and "torchfuzz.py" in reason
    assert "without a failure" not in ctx.artifacts["report.md"][1]
