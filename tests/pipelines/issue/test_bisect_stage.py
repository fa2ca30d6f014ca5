"""The issue pipeline's `bisect` stage with repeated probes, and what the report makes of it.

The sandbox is replaced by a scripted world (`runner.run_once`): each release plays a list of
runs, so a flaky bug whose first runs pass, a release that cannot be tested, and the number of
runs each release took are all exact. The stages run through `run_pipeline` from the state the
earlier stages would have left, then `report` turns the stored `bisect` into the comment.
"""

from __future__ import annotations

import pytest

from app.pipelines.base import run_pipeline
from app.pipelines.issue import runner
from app.pipelines.issue.stages import STAGES
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings

LABELS = ["2.0", "2.1", "2.2", "2.3", "2.4"]
REPORTED = {"kind": "exception", "exception": "RuntimeError", "message": "the bug is here",
            "expect": "RuntimeError: the bug is here"}
BUG = {"outcome": "error", "exception": "RuntimeError", "message": "the bug is here"}
CLEAN = {"outcome": "passed"}
NO_MODULE = {"outcome": "error", "exception": "ModuleNotFoundError", "message": "No module named 'functorch'"}
TIMEOUT = {"outcome": "timeout", "timeout_s": 20}


class World:
    """Scripted runs per release: `script[label]` is played in order and its last run repeats."""

    def __init__(self, script: dict[str, list[dict]]):
        self.script, self.runs = script, {label: 0 for label in script}

    def run_once(self, settings, source, label, timeout_s=None):
        plays = self.script[label]
        run = plays[min(self.runs[label], len(plays) - 1)]
        self.runs[label] += 1
        return dict(run) | {"environment": label, "output_tail": ""}


def reproduction(verdict: str, runs: int, reproduced: int, interval: list[float]) -> dict:
    result = (BUG if reproduced else CLEAN) | {"environment": LABELS[-1], "torch_version": "2.4.0", "output_tail": ""}
    return {"verdict": verdict, "runs": runs, "reproduced": reproduced, "rate": reproduced / runs,
            "interval": interval, "flaky_ratio": f"{reproduced}/{runs}" if 0 < reproduced < runs else None,
            "result": result, "description": "passed" if not reproduced else "RuntimeError: the bug is here"}


FIXED_NOW = reproduction("fixed", 14, 0, [0.0, 0.2153])
FLAKY_NOW = reproduction("reproduces", 6, 3, [0.1876, 0.8124])
DETERMINISTIC_NOW = reproduction("reproduces", 5, 5, [0.5655, 1.0])


def scrub_bisect(monkeypatch, world: World, now: dict, *, reported: dict | None = REPORTED,
                 expected_exception: str | None = None, **params) -> tuple[dict, MemoryRunContext]:
    """Run `bisect` then `report` from the state `reproduce` left; the merged outputs and the context."""
    monkeypatch.setattr(runner, "run_once", world.run_once)
    settings = Settings(sandbox="bwrap", environments=",".join(f"{label}=/envs/{label}/bin/python" for label in LABELS))
    ctx = MemoryRunContext(run_id=3, settings=settings, params={"repo": "o/r", "issue": 9, **params})
    state = {
        "issue": {"title": "bug", "html_url": "https://github.com/o/r/issues/9", "user": {"login": "alice"}},
        "repro": {"source": "raise RuntimeError('the bug is here')\n", "url": "https://github.com/o/r/issues/9",
                  "author": "alice", "lines": 1, "created_at": "2026-11-01T00:00:00Z", "by_original_poster": True},
        "reported": reported, "expected_exception": expected_exception,
        "triage": {"decision": "actionable", "reason": "a repro", "add_labels": [], "remove_labels": []},
        "reproduction": now, "verdict": now["verdict"],
    }
    run_pipeline([s for s in STAGES if s.name in ("bisect", "publish", "report")], ctx, state, any_queue=True)
    merged = dict(state)
    for record in ctx.stages:
        merged.update(record.output)
    return merged, ctx


def bisect_summary(ctx: MemoryRunContext) -> str:
    return next(r.summary for r in ctx.stages if r.stage == "bisect")


def test_a_flaky_bug_whose_first_runs_pass_is_not_called_fixed_in_the_first_release_tried(monkeypatch):
    flaky = [CLEAN, CLEAN, BUG]  # the bug is there, but shows on the third run only
    world = World({"2.0": flaky, "2.1": flaky, "2.2": flaky, "2.3": [CLEAN], "2.4": [CLEAN]})
    state, ctx = scrub_bisect(monkeypatch, world, FIXED_NOW)
    found = state["bisect"]
    assert (found["last_unchanged"], found["first_changed"]) == ("2.2", "2.3")
    plan = runner.bisect_plan(FIXED_NOW)
    assert state["bisect_plan"]["clean_runs"] == plan.clean_runs > 3  # it passes now: the rate "fixed" is sized for
    assert world.runs["2.3"] == plan.clean_runs and world.runs["2.4"] == 0  # the newest is known from `reproduce`
    assert bisect_summary(ctx) == "fixed in 2.3 (still fails in 2.2)"
    assert "It first stops reproducing in PyTorch 2.3 (it still reproduces in 2.2)." in state["publish"]["comment"]
    report = ctx.artifacts["report.md"][1]
    assert f"- 2.3: passes ({plan.clean_runs} runs)" in report and "- 2.2: reproduces (3 runs)" in report
    assert f"after {plan.clean_runs} clean runs in a row" in report


def test_a_flaky_regression_is_sized_by_the_rate_measured_now(monkeypatch):
    flaky = [CLEAN, CLEAN, CLEAN, CLEAN, BUG]
    world = World({"2.0": [CLEAN], "2.1": [CLEAN], "2.2": flaky, "2.3": flaky, "2.4": flaky})
    state, _ = scrub_bisect(monkeypatch, world, FLAKY_NOW, force_bisect=True)
    found = state["bisect"]
    assert (found["last_unchanged"], found["first_changed"]) == ("2.1", "2.2")
    assert state["bisect_plan"]["clean_runs"] == runner.bisect_plan(FLAKY_NOW).clean_runs == world.runs["2.0"]
    assert "It first reproduces in PyTorch 2.2 (it does not in 2.1)." in state["publish"]["comment"]


def test_a_deterministic_bug_takes_one_run_per_release(monkeypatch):
    world = World({"2.0": [CLEAN], "2.1": [CLEAN], "2.2": [BUG], "2.3": [BUG], "2.4": [BUG]})
    state, _ = scrub_bisect(monkeypatch, world, DETERMINISTIC_NOW, force_bisect=True)
    assert (state["bisect"]["last_unchanged"], state["bisect"]["first_changed"]) == ("2.1", "2.2")
    assert state["bisect_plan"]["clean_runs"] == 1 and set(world.runs.values()) <= {0, 1}


@pytest.mark.parametrize(("other", "why"), [(NO_MODULE, "No module named 'functorch'"), (TIMEOUT, "timed out after 20 s")])
def test_a_release_that_cannot_be_tested_next_to_the_change_gives_a_range(monkeypatch, other, why):
    world = World({"2.0": [BUG], "2.1": [BUG], "2.2": [other], "2.3": [CLEAN], "2.4": [CLEAN]})
    state, ctx = scrub_bisect(monkeypatch, world, FIXED_NOW)
    found = state["bisect"]
    assert found["first_changed"] is None and found["last_unchanged"] is None
    assert (found["changed_between"], found["untested"]) == (["2.1", "2.3"], ["2.2"])
    assert world.runs["2.2"] == 1  # not repeated: the other outcome settles "unknown"
    assert bisect_summary(ctx) == "fixed between 2.1 and 2.3; 2.2 could not be tested"
    comment = state["publish"]["comment"]
    assert "first stops reproducing" not in comment
    assert ("It stops reproducing between PyTorch 2.1 (it still reproduces there) and 2.3 (it no longer does); "
            "2.2 could not be tested, so the change may be there.") in comment
    report = ctx.artifacts["report.md"][1]
    assert "- 2.2: could not be tested (" in report and why in report
    assert "The change is between 2.1 and 2.3; 2.2 could not be tested." in report


def test_an_untestable_release_away_from_the_change_leaves_the_boundary_certain(monkeypatch):
    world = World({"2.0": [NO_MODULE], "2.1": [BUG], "2.2": [BUG], "2.3": [CLEAN], "2.4": [CLEAN]})
    state, ctx = scrub_bisect(monkeypatch, world, FIXED_NOW)
    assert (state["bisect"]["last_unchanged"], state["bisect"]["first_changed"]) == ("2.2", "2.3")
    assert bisect_summary(ctx) == "fixed in 2.3 (still fails in 2.2); 2.0 could not be tested"
    assert "It first stops reproducing in PyTorch 2.3 (it still reproduces in 2.2)." in state["publish"]["comment"]


def test_the_error_the_report_expected_instead_counts_as_clean(monkeypatch):
    """A segfault report that expects a RuntimeError instead: releases raising it are "absent"."""
    segfault = {"outcome": "crash", "signal": 11}
    raised = {"outcome": "error", "exception": "RuntimeError", "message": "index out of range"}
    world = World({"2.0": [segfault], "2.1": [segfault], "2.2": [raised], "2.3": [raised], "2.4": [raised]})
    now = reproduction("fixed", 14, 0, [0.0, 0.2153])
    state, _ = scrub_bisect(monkeypatch, world, now, reported={"kind": "segfault", "exception": "", "message": "",
                                                               "expect": "segfault"}, expected_exception="RuntimeError")
    assert (state["bisect"]["last_unchanged"], state["bisect"]["first_changed"]) == ("2.1", "2.2")


def test_a_run_stored_before_the_new_fields_still_renders(monkeypatch):
    """A `bisect` output stored by an older version: `probes` and a certain boundary only."""
    from app.pipelines.issue import KIND
    from app.pipelines.issue.report import build_report
    from app.pipelines.issue.state import IssueState

    old = {"first_changed": "2.3", "last_unchanged": "2.2", "oldest_outcome": True, "rounds": 2,
           "probes": {"2.0": True, "2.2": True, "2.3": False, "2.4": False}}
    ctx = MemoryRunContext(run_id=4, settings=Settings(), params={"repo": "o/r", "issue": 9})
    state = {"issue": {"title": "bug", "html_url": "https://github.com/o/r/issues/9", "user": {"login": "alice"}},
             "reproduction": FIXED_NOW, "verdict": "fixed", "bisect": old}
    built = build_report(ctx, IssueState.load(state), KIND.stage_names)
    assert "It first stops reproducing in PyTorch 2.3 (it still reproduces in 2.2)." in built.publish.comment
    assert "- 2.0: reproduces\n- 2.2: reproduces\n- 2.3: passes\n- 2.4: passes" in built.report
