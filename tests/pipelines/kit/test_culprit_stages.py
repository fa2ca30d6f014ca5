"""The culprit search after the nightlies as stages on both sides of the trust split: the commits
read on the default queue, probed on a repro queue whose `ctx.github` is a clone URL only, the
PR named on the default queue; and stages with nothing to do cost no handoff.

The pipeline runs as the workers run it: a stage of another queue stops the pass (`Handoff`)
and the next pass runs on that queue, with a full GitHub port on the default queue and the
repro worker's `RepoAccess` elsewhere. The runs and installs are scripted (`test_culprit.py`'s
world); the history, its nightly index and GitHub (the fake) are real.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from app.engine.verdict.bisect_probe import ProbePlan
from app.engine.verdict.culprit import COMMIT, Culprit, describe
from app.pipelines.base import CPU_QUEUE, DEFAULT_QUEUE, Finished, Handoff, run_pipeline
from app.pipelines.kit import builds
from app.pipelines.kit.culprit import PENDING, Search, nightly_step
from app.pipelines.kit.culprit_stages import commits_stage, pr_stage, range_stage
from app.pipelines.kit.narrowing import DONE, RANGE, Narrowing
from app.pipelines.kit.routed import on_default
from app.pipelines.memory import MemoryRunContext
from app.pipelines.state import PipelineState, plain
from tests.fakes.culprit_world import REPO, REPORTED, REPRO
from tests.fakes.fake_github import fake_github  # noqa: F401  (fixture)
from tests.pipelines.kit.test_culprit import BUG, NEWER, OLDER, scripted  # noqa: F401  (fixture)
from workers.repro import RepoAccess


@dataclass
class CulpritState(PipelineState):
    DECODE: ClassVar[dict] = {"culprit": Culprit.from_dict, "narrowing": Narrowing.from_dict}
    culprit: Culprit | None = None
    narrowing: Narrowing | None = None


SEARCH = Search(REPRO, REPORTED, ProbePlan.for_rate(1.0))
STAGES = [range_stage(CulpritState, idle=on_default),
          commits_stage(CulpritState, lambda state: CPU_QUEUE, on_default, lambda ctx, state: SEARCH),
          pr_stage(CulpritState, idle=on_default)]


class SplitContext(MemoryRunContext):
    """A context whose GitHub is the full port on the default queue, a clone URL elsewhere."""

    def __init__(self, full: Any, **kw):
        super().__init__(**kw)
        self.full, self.ran = full, []

    def on(self, queue: str) -> None:
        self.queue = queue
        self.github = self.full if queue == DEFAULT_QUEUE else RepoAccess(REPO, None)

    def stage_started(self, stage: str) -> None:
        self.ran.append((stage, self.queue))
        super().stage_started(stage)


def split_run(ctx: SplitContext, state: dict, start: str) -> tuple[Finished, list[str]]:
    """The stages pass by pass, switching sides at each handoff, as the workers do."""
    ctx.on(start)
    handoffs = []
    while isinstance(finished := run_pipeline(STAGES, ctx, state), Handoff):
        handoffs.append(finished.queue)
        ctx.on(finished.queue)
    return finished, handoffs


def test_the_reads_run_on_the_default_queue_and_the_probes_where_there_is_no_github(scripted, monkeypatch):  # noqa: F811
    world, _, memory, index = scripted([BUG])
    laid = {}
    monkeypatch.setattr(builds, "overlay_env", lambda base, files, root, key, note: laid.setdefault(note["commit"], files)
                        and root / f"commit-{note['commit']}")
    with index:
        culprit, narrowing = nightly_step(memory, SEARCH, OLDER, NEWER)  # the repro side's first step
    assert narrowing.step == RANGE and culprit.note == PENDING
    ctx = SplitContext(memory.github, settings=memory.settings, params={"repo": REPO})
    finished, handoffs = split_run(ctx, {"culprit": plain(culprit), "narrowing": plain(narrowing)}, CPU_QUEUE)
    assert finished.status == "succeeded" and handoffs == [DEFAULT_QUEUE, CPU_QUEUE, DEFAULT_QUEUE]
    assert ctx.ran == [("culprit_range", DEFAULT_QUEUE), ("culprit_commits", CPU_QUEUE), ("culprit_pr", DEFAULT_QUEUE)]
    found = Culprit.from_dict(ctx.completed_stages()["culprit_pr"]["culprit"])
    assert found.level == COMMIT and found.commit.sha == world.culprit and found.pull == world.pulls[world.culprit]
    assert describe(found, REPO) == "regressed in #2011 (nightly 2026-03-03 passes, 2026-03-04 fails)"
    assert found.note == ""  # the pending note is gone once the commits were searched
    # The culprit commit's build was the older nightly with its Python, as read on the trusted side.
    assert "return 3 * x" in laid[world.culprit]["torch/ops.py"]


def test_with_no_commit_range_to_search_the_stages_are_skipped_where_the_run_is(scripted):  # noqa: F811
    _, _, memory, _ = scripted([BUG])
    ctx = SplitContext(memory.github, settings=memory.settings, params={"repo": REPO})
    finished, handoffs = split_run(ctx, {}, DEFAULT_QUEUE)
    assert finished.status == "succeeded" and handoffs == []
    assert [r.status for r in ctx.stages] == ["skipped"] * 3


def test_a_range_that_cannot_be_read_ends_at_the_nightlies_with_why(scripted, fake_github):  # noqa: F811
    _, _, memory, index = scripted([BUG])
    with index:
        culprit, narrowing = nightly_step(memory, SEARCH, OLDER, NEWER)
    fake_github.inject_failure("GET", "/compare/", status=404)
    ctx = SplitContext(memory.github, settings=memory.settings, params={"repo": REPO})
    finished, handoffs = split_run(ctx, {"culprit": plain(culprit), "narrowing": plain(narrowing)}, CPU_QUEUE)
    assert finished.status == "succeeded" and handoffs == [DEFAULT_QUEUE] and [s for s, _ in ctx.ran] == ["culprit_range", "culprit_commits",
                                                                           "culprit_pr"]
    state = ctx.completed_stages()
    found = Culprit.from_dict(state["culprit_range"]["culprit"])
    assert found.note.startswith("The commits between the two nightlies could not be read")
    assert Narrowing.from_dict(state["culprit_range"]["narrowing"]).step == DONE
    assert describe(found, REPO) == "regressed (nightly 2026-03-03 passes, 2026-03-04 fails)"
