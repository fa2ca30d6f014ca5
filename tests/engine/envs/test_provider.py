"""The build provider on a pytorch-like history and a PEP 503 nightly index served on loopback."""

from __future__ import annotations

import pytest

from app.engine.envs.history import classify, source_commit
from app.engine.envs.index import peek_version_py, torch_wheels
from app.engine.envs.provider import BuildSources, plan_build
from app.engine.envs.variants import build_from_version_py, variant_of
from app.engine.git.repo import MirrorCache
from tests.fakes.torch_nightlies import WheelIndex, make_pytorch_history, nightly_wheels


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("nightlies")
    history = make_pytorch_history(tmp)
    cache = MirrorCache(tmp / "mirrors")
    mirror = cache.sync("pytorch/pytorch", history.bare)
    trees = {name: cache.worktree("pytorch/pytorch", sha, tmp / "wt" / name) for name, sha in history.commits.items()}
    with WheelIndex(nightly_wheels(history, tmp / "index")) as index:
        yield history, mirror, trees, index, tmp


def _plan(world, name, **sources):
    history, mirror, trees, index, tmp = world
    peek = lambda wheel: peek_version_py(wheel, tmp / "wheel-cache")  # noqa: E731
    return plan_build(trees[name], mirror, history.commits[name],
                      BuildSources(nightly_index=sources.pop("index", index.url), **sources), peek)


def test_the_index_lists_the_nightlies_and_a_wheel_is_read_by_ranges(world, tmp_path):
    history, _, _, index, _ = world
    wheels = torch_wheels(index.url)
    assert [w.version for w in wheels] == ["2.14.0.dev20260102+cpu", "2.14.0.dev20260104+cpu",
                                           "2.14.0.dev20260104+cu126"]
    before = len(index.requests)
    build = build_from_version_py(peek_version_py(wheels[0], tmp_path))
    assert build.git_version == history.commits["c1"] and build.variant == "cpu"
    asked = index.requests[before:]
    assert asked and all("bytes=" in line for line in asked), asked  # never the whole wheel
    assert not any(tmp_path.glob("*.whl"))


def test_a_server_without_ranges_gets_the_wheel_downloaded_once(world, tmp_path):
    history, _, _, _, tmp = world
    with WheelIndex(tmp / "index", ranges=False) as plain:
        wheel = torch_wheels(plain.url)[2]
        assert build_from_version_py(peek_version_py(wheel, tmp_path)).cuda == "12.6"
        assert (tmp_path / wheel.filename).is_file()
        again = len(plain.requests)
        peek_version_py(wheel, tmp_path)
        assert len(plain.requests) == again  # remembered


def test_a_python_only_change_runs_on_the_nearest_nightly_with_an_overlay(world):
    history = world[0]
    plan = _plan(world, "c2")
    assert (plan.outcome, plan.version, plan.base, plan.distance) == (
        "nightly", "2.14.0.dev20260102+cpu", history.commits["c1"], 1)
    assert plan.overlay == ["torch/ops.py"] and plan.compiled == []
    assert plan.describe() == (f"torch 2.14.0.dev20260102+cpu (git_version {history.commits['c1'][:12]}, cpu, nightly), "
                               f"built from {history.commits['c1'][:12]}, 1 commits before, + the 1 Python files "
                               "changed since (overlay)")


def test_a_nightly_branch_git_version_stands_for_the_commit_it_names(world):
    history, mirror = world[0], world[1]
    assert source_commit(mirror, history.nightly_commit) == history.commits["c3"]
    plan = _plan(world, "c3")
    assert (plan.outcome, plan.version, plan.git_version, plan.base, plan.overlay) == (
        "nightly", "2.14.0.dev20260104+cpu", history.nightly_commit, history.commits["c3"], [])
    assert plan.describe().endswith("the commit's own build (no overlay)")


def test_a_cpp_change_since_the_nightly_needs_a_build(world):
    plan = _plan(world, "c4")
    assert plan.outcome == "needs-build" and plan.compiled == ["aten/src/scale.cpp"]
    assert "aten/src/scale.cpp" in plan.reason and "SCRUB_BUILD_COMMAND" in plan.reason
    assert not plan.runnable
    assert _plan(world, "c4", build_command="fetch-ci-wheel.sh").outcome == "command"


def test_a_gpu_worker_never_gets_a_cpu_build(world):
    assert _plan(world, "c3", gpu=True).version == "2.14.0.dev20260104+cu126"
    none = _plan(world, "c2", gpu=True)
    assert none.outcome == "needs-build" and "no accelerator nightly" in none.reason


def test_a_release_tag_runs_its_release_keyed_by_variant(world):
    plan = _plan(world, "c5", releases={"2.14.0+cpu": "/envs/a/bin/python", "2.14.0+cu126": "/envs/b/bin/python"})
    assert (plan.outcome, plan.version, plan.python, plan.overlay) == ("release", "2.14.0+cpu", "/envs/a/bin/python", [])
    gpu = _plan(world, "c5", gpu=True, releases={"2.14.0+cpu": "/envs/a/bin/python"})
    assert gpu.outcome == "needs-build"  # the CPU release is not for a GPU worker; c4's C++ change is after c3
    assert _plan(world, "c2", index="").outcome == "needs-build"


def test_a_repository_that_is_not_pytorch_uses_the_interpreter(world, tmp_path):
    history, mirror, _, index, _ = world
    (tmp_path / "lib").mkdir()
    plan = plan_build(tmp_path, mirror, history.commits["c1"], BuildSources(nightly_index=index.url), lambda w: "")
    assert plan.outcome == "interpreter" and plan.runnable
    assert plan.describe() == "the worker's interpreter, no torch installed: the repository is not PyTorch itself: it " \
        "builds no torch"


def test_variants_and_classification():
    assert [variant_of(v) for v in ("2.13.0+cpu", "2.10.0.dev20250901+cu126", "2.5.0+rocm6.2")] == \
        ["cpu", "cu126", "rocm6.2"]
    assert variant_of("2.13.0", cuda="12.8") == "cu128" and variant_of("2.13.0") == "cpu"
    changes = classify(["torch/nn/functional.py", "torch/csrc/autograd/engine.cpp", "test/test_nn.py",
                        "aten/src/ATen/native/native_functions.yaml", "torchgen/model.py", "docs/index.rst"])
    assert changes.python == ("torch/nn/functional.py",)
    assert set(changes.compiled) == {"torch/csrc/autograd/engine.cpp", "aten/src/ATen/native/native_functions.yaml",
                                     "torchgen/model.py"}
