"""The default branch of a repository, as its remote names it."""

from __future__ import annotations

from app.pipelines.kit.branch import default_branch
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings
from tests.fakes.ci_project import _git


def test_the_branch_the_remote_head_names_and_its_tip(tmp_path):
    src, bare = tmp_path / "src", tmp_path / "r.git"
    _git(tmp_path, "init", "--quiet", "--bare", "--initial-branch=trunk", str(bare))
    _git(tmp_path, "init", "--quiet", "--initial-branch=trunk", str(src))
    (src / "a.txt").write_text("a\n")
    _git(src, "add", "-A")
    _git(src, "commit", "--quiet", "-m", "a", author="Ada|ada@example.com")
    _git(src, "push", "--quiet", str(bare), "trunk")
    ctx = MemoryRunContext(settings=Settings(data_dir=tmp_path / "data"), params={"remote": str(bare)})
    assert default_branch(ctx, "o/r") == ("trunk", _git(src, "rev-parse", "HEAD"))
