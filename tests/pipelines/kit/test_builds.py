"""A single commit's build: what changed since the nightly decides (Python over it, a build
command, or nothing), and hostile answers from GitHub become "could not be built", never a path
outside the environment."""

from __future__ import annotations

import pytest

from app.engine.envs.provision import ProvisionError
from app.pipelines.kit import builds
from app.settings import Settings

BASE, COMMIT = "a" * 40, "b" * 40


class Compare:
    """A GitHub port answering one `compare` and file reads from a dict."""

    def __init__(self, files: list[dict], status: str = "ahead", texts: dict[str, str] | None = None):
        self.files, self.status, self.texts, self.read = files, status, texts or {}, []

    def compare_commits(self, repo, base, head):
        return {"status": self.status, "files": self.files, "commits": [], "total_commits": 1}

    def file_at(self, repo, path, ref):
        self.read.append((path, ref))
        return self.texts.get(path)


def settings(tmp_path, **more) -> Settings:
    return Settings(data_dir=tmp_path, **more)


def test_the_shipped_python_a_commit_changed_is_laid_over(tmp_path, monkeypatch):
    github = Compare([{"filename": "torch/ops.py", "status": "modified"},
                      {"filename": "torch/new_name.py", "status": "renamed", "previous_filename": "torch/old_name.py"},
                      {"filename": "torch/gone.py", "status": "removed"},
                      {"filename": "test/test_ops.py", "status": "modified"},  # not in the wheel
                      {"filename": "docs/ops.md", "status": "modified"}],
                     texts={"torch/ops.py": "OPS\n", "torch/new_name.py": "NEW\n"})
    made = {}
    monkeypatch.setattr(builds, "overlay_env", lambda base, files, root, key, note: made.update(files=files, key=key)
                        or tmp_path / key)
    env = builds.commit_env(settings(tmp_path), github, "pytorch/pytorch", tmp_path / "nightly", BASE, COMMIT)
    assert made["files"] == {"torch/ops.py": "OPS\n", "torch/old_name.py": None, "torch/new_name.py": "NEW\n",
                             "torch/gone.py": None}
    assert github.read == [("torch/ops.py", COMMIT), ("torch/new_name.py", COMMIT)]
    assert env.name == made["key"] == f"{COMMIT[:16]}-on-{BASE[:8]}"  # per commit AND per nightly under it


def test_compiled_sources_need_the_build_command(tmp_path):
    github = Compare([{"filename": "aten/src/ATen/native/Conv.cpp", "status": "modified"},
                      {"filename": "torch/ops.py", "status": "modified"}])
    with pytest.raises(builds.CannotBuild, match=r"needs a build: 1 compiled sources changed since the nightly "
                                                 r"\(aten/src/ATen/native/Conv.cpp\).*SCRUB_BUILD_COMMAND"):
        builds.commit_env(settings(tmp_path), github, "pytorch/pytorch", tmp_path, BASE, COMMIT)


def test_when_github_lists_all_it_may_the_change_is_unknown(tmp_path):
    github = Compare([{"filename": f"torch/f{n}.py", "status": "modified"} for n in range(300)])
    with pytest.raises(builds.CannotBuild, match="GitHub lists at most 300"):
        builds.commit_env(settings(tmp_path), github, "pytorch/pytorch", tmp_path, BASE, COMMIT)


def test_a_commit_off_the_nightly_s_line_is_refused(tmp_path):
    with pytest.raises(builds.CannotBuild, match="does not descend"):
        builds.commit_env(settings(tmp_path), Compare([], status="diverged"), "pytorch/pytorch", tmp_path, BASE, COMMIT)


def test_a_hostile_file_name_never_leaves_the_environment(tmp_path):
    github = Compare([{"filename": "torch/../../../../etc/cron.d/x.py", "status": "added"}],
                     texts={"torch/../../../../etc/cron.d/x.py": "boom\n"})
    base = tmp_path / "nightly"
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(base)], check=True)
    with pytest.raises(ProvisionError, match="not a relative path inside site-packages"):
        builds.commit_env(settings(tmp_path), github, "pytorch/pytorch", base, BASE, COMMIT)


def test_a_nightly_branch_commit_stands_for_the_commit_its_subject_names():
    class Commits:
        def get_commit(self, repo, sha):
            message = f"2026-03-05 nightly release ({COMMIT})" if sha == BASE else "Fix it (#1)"
            return {"sha": sha, "commit": {"message": message}}

    assert builds.source_commit(Commits(), "pytorch/pytorch", BASE) == COMMIT
    assert builds.source_commit(Commits(), "pytorch/pytorch", COMMIT) == COMMIT  # a build of main itself
