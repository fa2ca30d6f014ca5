"""The bisect stage's second half: the two releases around the change go to the culprit search,
and the comment gets the culprit line with its probes.

The release bisection runs on scripted runs (as in `test_bisect_stage.py`); the culprit search
itself (its nightly step here; all of it in `tests/pipelines/kit/test_culprit.py`, through the
trust split in `tests/workers/test_culprit_split.py`) is replaced by a recorder that answers what
it would find, so this checks what the stage hands it and what the comment makes of it.
"""

from __future__ import annotations

from app.engine.verdict import bisect as bisection
from app.engine.verdict.culprit import COMMIT, NIGHTLY, Commit, Culprit, Level
from app.pipelines.base import run_pipeline
from app.pipelines.issue import culprits, runner
from app.pipelines.issue.stages import STAGES
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings
from tests.pipelines.issue.test_bisect_stage import BUG, CLEAN, DETERMINISTIC_NOW, FIXED_NOW, LABELS, REPORTED, World

NIGHTLY_LABELS = ["2.2", "nightly 2026-03-03", "nightly 2026-03-04", "2.3"]


def nightly_level(older_fails: bool) -> Level:
    found = bisection.bisect(NIGHTLY_LABELS, lambda label: (label == "nightly 2026-03-04") != older_fails,
                             known={"2.2": older_fails, "2.3": not older_fails})
    return Level(NIGHTLY, found, wall_s=40.0)


class Recorder:
    def __init__(self, answer):
        self.answer, self.calls = answer, []

    def __call__(self, ctx, search, older, newer):
        self.calls.append((search, older, newer))
        return self.answer(older.reproduces), None  # no commit range left to the stages after it


def scrub(monkeypatch, world, now, recorder, *, index="http://127.0.0.1:9/simple", **params):
    monkeypatch.setattr(runner, "run_once", world.run_once)
    monkeypatch.setattr(culprits, "nightly_step", recorder)
    monkeypatch.setattr(culprits, "_version", lambda python: python.split("/")[2] + ".0+cpu")
    settings = Settings(sandbox="bwrap", torch_nightly_index_url=index,
                        environments=",".join(f"{label}=/envs/{label}/bin/python" for label in LABELS))
    ctx = MemoryRunContext(run_id=3, settings=settings, params={"repo": "pytorch/pytorch", "issue": 9, **params})
    state = {
        "issue": {"title": "bug", "html_url": "https://github.com/pytorch/pytorch/issues/9", "user": {"login": "al"}},
        "repro": {"source": "raise RuntimeError('the bug is here')\n", "url": "https://github.com/pytorch/pytorch/issues/9",
                  "author": "al", "lines": 1, "created_at": "2026-11-01T00:00:00Z", "by_original_poster": True},
        "reported": REPORTED, "triage": {"decision": "actionable", "reason": "a repro", "add_labels": [],
                                         "remove_labels": []},
        "reproduction": now, "verdict": now["verdict"],
    }
    run_pipeline([s for s in STAGES if s.name in ("bisect", "publish", "report")], ctx, state, any_queue=True)
    merged = dict(state)
    for record in ctx.stages:
        merged.update(record.output)
    return merged, ctx


def fixed_by_pr(older_fails: bool) -> Culprit:
    return Culprit("fixed" if older_fails else "regressed", COMMIT, "c", "c", True, "pytorch/pytorch",
                   commit=Commit("c" * 40, "Fix the kernel (#1234)", 1234), levels=[nightly_level(older_fails)])


def test_the_releases_around_a_fix_go_to_the_culprit_search_and_the_comment_names_the_pr(monkeypatch):
    world = World({"2.0": [BUG], "2.1": [BUG], "2.2": [BUG], "2.3": [CLEAN], "2.4": [CLEAN]})
    recorder = Recorder(fixed_by_pr)
    state, ctx = scrub(monkeypatch, world, FIXED_NOW, recorder)
    (search, older, newer), = recorder.calls
    assert (older.label, older.version, older.reproduces) == ("2.2", "2.2.0+cpu", True)
    assert (newer.label, newer.version, newer.reproduces) == ("2.3", "2.3.0+cpu", False)
    assert older.python == "/envs/2.2/bin/python"
    assert search.plan == runner.bisect_plan(FIXED_NOW)  # the probes are sized as the release probes were
    assert search.source == "raise RuntimeError('the bug is here')\n" and search.reported == REPORTED
    comment = state["publish"]["comment"]
    assert "Culprit: fixed by #1234 (nightly 2026-03-03 fails, 2026-03-04 passes)." in comment
    assert "<details><summary>Probes</summary>" in comment and "- nightly 2026-03-04: passes (1 run)" in comment
    summary = next(r.summary for r in ctx.stages if r.stage == "bisect")
    assert summary == "fixed in 2.3 (still fails in 2.2); fixed by #1234 (nightly 2026-03-03 fails, 2026-03-04 passes)"
    assert "## Culprit" in ctx.artifacts["report.md"][1]
    assert state["culprit"]["commit"]["pull"] == 1234


def test_a_forced_bisection_of_a_regression_says_regressed_in(monkeypatch):
    world = World({"2.0": [CLEAN], "2.1": [CLEAN], "2.2": [CLEAN], "2.3": [BUG], "2.4": [BUG]})
    state, _ = scrub(monkeypatch, world, DETERMINISTIC_NOW, Recorder(fixed_by_pr), force_bisect=True)
    assert "Culprit: regressed in #1234 (nightly 2026-03-03 passes, 2026-03-04 fails)." in state["publish"]["comment"]


def test_without_a_nightly_index_nothing_finer_is_searched(monkeypatch):
    world = World({"2.0": [BUG], "2.1": [BUG], "2.2": [BUG], "2.3": [CLEAN], "2.4": [CLEAN]})
    recorder = Recorder(fixed_by_pr)
    state, _ = scrub(monkeypatch, world, FIXED_NOW, recorder, index="")
    assert recorder.calls == [] and state.get("culprit") is None
    assert "Culprit:" not in state["publish"]["comment"]


def test_a_search_that_stayed_between_releases_adds_no_culprit_line(monkeypatch):
    world = World({"2.0": [BUG], "2.1": [BUG], "2.2": [BUG], "2.3": [CLEAN], "2.4": [CLEAN]})
    stayed = Recorder(lambda older_fails: Culprit("fixed", "release", "2.2", "2.3", True, "pytorch/pytorch",
                                                  note="No nightly on the index lies between 2.2 and 2.3."))
    state, ctx = scrub(monkeypatch, world, FIXED_NOW, stayed)
    assert "Culprit:" not in state["publish"]["comment"]
    assert "No nightly on the index lies between 2.2 and 2.3." in ctx.artifacts["report.md"][1]


def test_a_failed_culprit_search_leaves_the_release_range_standing(monkeypatch):
    world = World({"2.0": [BUG], "2.1": [BUG], "2.2": [BUG], "2.3": [CLEAN], "2.4": [CLEAN]})

    def broken(older_fails):
        raise ConnectionError("the nightly index went away")

    state, ctx = scrub(monkeypatch, world, FIXED_NOW, Recorder(broken))
    assert state.get("culprit") is None and state["bisect"]["first_changed"] == "2.3"
    assert next(r.status for r in ctx.stages if r.stage == "bisect") == "done"
    assert any("culprit search failed, the release range stands: ConnectionError" in line for line in ctx.lines)
