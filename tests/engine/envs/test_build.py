"""A planned nightly made runnable: a pinned cached environment, the checkout's Python over the
nightly's compiled parts, in the real sandbox."""

from __future__ import annotations

import pytest

from app.engine.envs.build import prepare
from app.engine.envs.index import peek_version_py
from app.engine.envs.nightly_env import compiled_binds, existing, site_packages
from app.engine.envs.provider import BuildSources, plan_build
from app.engine.envs.variants import build_from_version_py
from app.engine.git.repo import MirrorCache
from app.engine.sandbox.runner import Sandbox, SandboxSpec
from app.engine.sandbox.treerun import TreeRunner, pytest_argv
from tests.engine.sandbox.helpers import needs_bwrap
from tests.fakes.torch_nightlies import WheelIndex, make_pytorch_history, nightly_wheels


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """c2 (a Python-only fix one commit after the 20260102 nightly) prepared once."""
    tmp = tmp_path_factory.mktemp("build")
    history = make_pytorch_history(tmp)
    cache = MirrorCache(tmp / "mirrors")
    mirror = cache.sync("pytorch/pytorch", history.bare)
    tree = cache.worktree("pytorch/pytorch", history.commits["c2"], tmp / "wt")
    with WheelIndex(nightly_wheels(history, tmp / "index")) as index:
        sources = BuildSources(nightly_index=index.url)
        plan = plan_build(tree, mirror, history.commits["c2"], sources,
                          lambda wheel: peek_version_py(wheel, tmp / "wheels"))
        build = prepare(plan, commit=history.commits["c2"], envs_root=tmp / "envs", wheel_cache=tmp / "wheels",
                        index_url=index.url)
        yield history, tree, build, tmp


def test_the_nightly_is_installed_pinned_into_a_cached_environment(prepared):
    history, _, build, tmp = prepared
    env = tmp / "envs" / "nightly" / "2.14.0.dev20260102+cpu"
    assert build.python == str(env / "bin" / "python")
    installed = build_from_version_py((site_packages(env) / "torch" / "version.py").read_text())
    assert installed.git_version == history.commits["c1"] and installed.variant == "cpu"
    assert existing(tmp / "envs" / "nightly", installed) == env  # reused next time, not rebuilt
    assert set(build.binds) == {"torch/version.py", "torch/lib"}
    assert build.env == {"PYTHONPATH": "/tmp/work"}


def test_compiled_binds_follow_nightly_py(tmp_path):
    site = tmp_path / "site"
    for rel in ("torch/_C.cpython-311-x86_64-linux-gnu.so", "torch/lib/libtorch_cpu.so", "torch/version.py",
                "torch/testing/_internal/generated/annotated_fn_args.py", "torch/bin/torch_shm_manager",
                "torch/nn/functional.py", "torch/_C/__init__.pyi"):
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text("")
    assert sorted(compiled_binds(site)) == ["torch/_C.cpython-311-x86_64-linux-gnu.so", "torch/bin", "torch/lib",
                                            "torch/testing/_internal/generated", "torch/version.py"]


@needs_bwrap
def test_the_commits_python_runs_over_the_nightlys_compiled_parts(prepared):
    history, tree, build, _ = prepared
    spec = SandboxSpec(python=build.python, env=build.env)
    runner = TreeRunner(Sandbox(spec), tree, build.binds)
    result = runner.run(pytest_argv("test/test_scale.py", extra=["-s"]), timeout_s=120)
    out = result.output.text()
    assert result.exit_code == 0, out  # scale() of c2 (the overlay) triples: the nightly's own doubles
    assert "KERNEL kernel of 2.14.0.dev20260102+cpu" in out and f"GIT {history.commits['c1']}" in out
    # The same environment without the checkout: the nightly's own Python, which still doubles.
    plain = Sandbox(SandboxSpec(python=build.python)).run("import torch; print('own', torch.scale(1))", timeout_s=60)
    assert "own 2" in plain.output.text(), plain.output.text()
    assert not (tree / "torch" / "lib").exists() and not (tree / "torch" / "version.py").exists()
