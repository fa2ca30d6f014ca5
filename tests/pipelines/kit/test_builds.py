"""A single commit's build on the repro side, from what the trusted side read (a `CommitBuild`):
Python over the nightly, a build command, or "could not be built" with why; a hostile file name
never becomes a path outside the environment. No GitHub here: the texts come with the state."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app.engine.envs.provision import ProvisionError
from app.pipelines.kit import builds
from app.pipelines.kit.narrowing import CommitBuild
from app.settings import Settings

BASE, COMMIT = "a" * 40, "b" * 40


def settings(tmp_path, **more) -> Settings:
    return Settings(data_dir=tmp_path, **more)


def test_the_shipped_python_a_commit_changed_is_laid_over_from_the_texts_it_came_with(tmp_path, monkeypatch):
    build = CommitBuild(COMMIT, "Fix it (#1)", [1], files={"torch/ops.py": "k1", "torch/old_name.py": None,
                                                          "torch/new_name.py": "k2", "torch/gone.py": None})
    made = {}
    monkeypatch.setattr(builds, "overlay_env", lambda base, files, root, key, note: made.update(files=files, key=key)
                        or tmp_path / key)
    env = builds.commit_env(settings(tmp_path), tmp_path / "nightly", BASE, build, {"k1": "OPS\n", "k2": "NEW\n"})
    assert made["files"] == {"torch/ops.py": "OPS\n", "torch/old_name.py": None, "torch/new_name.py": "NEW\n",
                             "torch/gone.py": None}
    assert env.name == made["key"] == f"{COMMIT[:16]}-on-{BASE[:8]}"  # per commit AND per nightly under it


def test_a_text_that_did_not_come_with_the_job_is_no_build(tmp_path):
    build = CommitBuild(COMMIT, "t", files={"torch/ops.py": "k1"})
    with pytest.raises(builds.CannotBuild, match="the text of 1 changed Python files did not come with the job"):
        builds.commit_env(settings(tmp_path), tmp_path, BASE, build, {})


def test_compiled_sources_need_the_build_command(tmp_path):
    build = CommitBuild(COMMIT, "t", compiled=["aten/src/ATen/native/Conv.cpp"])
    with pytest.raises(builds.CannotBuild, match=r"needs a build: 1 compiled sources changed since the nightly "
                                                 r"\(aten/src/ATen/native/Conv.cpp\).*SCRUB_BUILD_COMMAND"):
        builds.commit_env(settings(tmp_path), tmp_path, BASE, build, {})


def test_what_the_trusted_side_could_not_read_is_the_reason(tmp_path):
    build = CommitBuild(COMMIT, "t", cannot="300+ files changed since the nightly: GitHub lists at most 300")
    with pytest.raises(builds.CannotBuild, match="GitHub lists at most 300"):
        builds.commit_env(settings(tmp_path), tmp_path, BASE, build, {})


def test_a_hostile_file_name_never_leaves_the_environment(tmp_path):
    build = CommitBuild(COMMIT, "t", files={"torch/../../../../etc/cron.d/x.py": "k"})
    base = tmp_path / "nightly"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(base)], check=True)
    with pytest.raises(ProvisionError, match="not a relative path inside site-packages"):
        builds.commit_env(settings(tmp_path), base, BASE, build, {"k": "boom\n"})
