"""A re-check end to end in memory: the sandbox runs the repro for real, GitHub is the fake.

Two interpreters stand for two builds (`tests/pipelines/envs.py`): the repro raises on the old
one's prefix only, so a re-check on the new one passes and the old one witnesses the bug. What
GitHub sees is read back from the fake: one comment per change of state, labels, the close.
"""

from __future__ import annotations

import pytest

from app.github.client import GitHubClient
from app.pipelines.base import run_pipeline
from app.pipelines.memory import MemoryRunContext
from app.pipelines.progression.stages import STAGES
from app.settings import Settings
from tests.fakes.fake_github import fake_github  # noqa: F401  (fixture)
from tests.pipelines.envs import PREFIX_BUG, make_envs, remove

REPO = "o/r"
REPORTED = {"kind": "exception", "exception": "RuntimeError", "message": "the bug is here",
            "expect": "RuntimeError: the bug is here"}
FIXED_IN_NEW = PREFIX_BUG.format(broken="old")
STILL_BROKEN = "raise RuntimeError('the bug is here')\n"


@pytest.fixture(scope="module")
def envs():
    made, root = make_envs(["old", "new"])
    yield made
    remove(root)


def recheck(fake, envs, tmp_path, source: str, *, run_id: int = 1, last_state: str = "reproduces",
            last_build: bool = True, trusted: bool = True) -> MemoryRunContext:
    fake.add_issue(REPO, 7, title="the bug") if 7 not in fake.add_repo(REPO).issues else None
    settings = Settings(data_dir=tmp_path / "data", sandbox="bwrap", repro_timeout=30,
                        environments=",".join(f"{k}={v}" for k, v in envs.items()))
    params = {"repo": REPO, "number": 7, "target": "issue", "source_run": 3, "title": "the bug",
              "last_state": last_state, "reason": "new build new", "source": source, "reported": REPORTED,
              "trusted": trusted, "reproduction": {"runs": 5, "reproduced": 5, "interval": [0.5655, 1.0]},
              "build": {"label": "new", "version": "", "kind": "release", "python": envs["new"]},
              "last_build": {"label": "old", "version": "", "kind": "release", "python": envs["old"]}
              if last_build else None}
    ctx = MemoryRunContext(run_id=run_id, github=GitHubClient(token="t", base_url=fake.url), settings=settings,
                           params=params)
    run_pipeline(STAGES, ctx, any_queue=True)
    return ctx


def comments(fake) -> list[str]:
    return [c["body"] for c in fake.comments(REPO, 7)]


def test_a_fix_with_its_witness_is_commented_labelled_and_closed(fake_github, envs, tmp_path):  # noqa: F811
    ctx = recheck(fake_github, envs, tmp_path, FIXED_IN_NEW)
    assert ctx.verdict == "fixed"
    (body,) = comments(fake_github)
    assert body.startswith("This issue no longer reproduces on PyTorch new: fixed in new.")
    assert "Witness: on PyTorch old the same script still fails with the reported failure." in body
    assert "(14 clean runs in a row)" in body and "<!-- scrubbot:run=1:progression -->" in body
    assert "Culprit:" not in body  # no nightly index: nothing finer than the two builds
    issue = fake_github.issue(REPO, 7)
    assert issue["state"] == "closed" and issue["state_reason"] == "completed"
    assert fake_github.label_names(REPO, 7) == ["fixed"]


def test_a_bug_that_still_reproduces_writes_nothing_however_often_it_is_re_checked(fake_github, envs, tmp_path):  # noqa: F811
    for run_id in (1, 2):
        ctx = recheck(fake_github, envs, tmp_path, STILL_BROKEN, run_id=run_id)
        assert ctx.verdict == "reproduces"
    assert fake_github.writes == []
    assert "no change (reproduces -> reproduces): nothing written" in [s.summary for s in ctx.stages]


def test_without_a_witness_it_passes_now_and_stays_open(fake_github, envs, tmp_path):  # noqa: F811
    ctx = recheck(fake_github, envs, tmp_path, FIXED_IN_NEW, last_build=False)
    assert ctx.verdict == "passes-now"
    (body,) = comments(fake_github)
    assert "cannot confirm it is fixed: the build it last reproduced on is no longer provisioned" in body
    assert fake_github.issue(REPO, 7)["state"] == "open" and fake_github.label_names(REPO, 7) == ["passes now"]
    recheck(fake_github, envs, tmp_path, FIXED_IN_NEW, run_id=2, last_state="passes-now", last_build=False)
    assert len(comments(fake_github)) == 1  # the same state again: no second comment


def test_a_stranger_s_script_is_never_closed_on(fake_github, envs, tmp_path):  # noqa: F811
    ctx = recheck(fake_github, envs, tmp_path, FIXED_IN_NEW, trusted=False)
    assert ctx.verdict == "fixed" and fake_github.issue(REPO, 7)["state"] == "open"
    assert "only a person may close it" in comments(fake_github)[0]


def test_an_issue_closed_meanwhile_is_left_alone(fake_github, envs, tmp_path):  # noqa: F811
    fake_github.add_issue(REPO, 7, title="the bug", state="closed")
    ctx = recheck(fake_github, envs, tmp_path, STILL_BROKEN)
    assert (ctx.status, ctx.verdict) == ("skipped", "closed") and fake_github.writes == []
    assert [s.stage for s in ctx.stages] == ["check"]
