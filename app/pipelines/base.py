"""Stages, pipelines and the `RunContext` port they run against.

A pipeline is a list of named stages. Each stage is a function `(ctx, state) -> StageResult`
that composes engine calls. The runner records every stage through the context; a stage
recorded as done is not run again on a retry: its stored output is merged back into the
state instead (ClusterFuzz-style: check what is stored, return early).

Queue routing: a stage names the queue it must run on (a function of the state, so a
reproduce stage can ask for `repro-gpu` only when the repro needs CUDA). When the current
worker serves another queue, `run_pipeline` returns a `Handoff` and the shell re-enqueues
the run on that queue; the next task resumes at that stage.

State: the runner keeps it as plain JSON (what the database stores); each stage is given its
pipeline's typed view of it (`Stage.state`, a `PipelineState` subclass: see
`app.pipelines.state`) and its output keys are checked against that class's fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from app.domain import (CPU_QUEUE, DEFAULT_QUEUE, GPU_QUEUE, QUEUES, RunStatus, SignatureStore, StageStatus,
                        StageSummary, failed_on_their_own)
from app.github.port import GitHubPort
from app.pipelines.state import PlainState, plain
from app.settings import Settings

__all__ = ["CPU_QUEUE", "DEFAULT_QUEUE", "GPU_QUEUE", "QUEUES", "Finished", "Handoff", "RunContext", "Stage", "StageResult", "State", "on_queue", "run_pipeline"]

State = dict[str, Any]  # a pipeline's state or a stage's output, as stored (JSON)


@dataclass
class StageResult:
    """What a stage produced.

    `output` is merged into the pipeline state and stored with the stage event; its keys are
    fields of the pipeline's state class, its values JSON or typed parts with `to_dict()`.
    `end` finishes the run with that status (`succeeded`, `failed`, `skipped`); `wait` parks
    it in `awaiting_approval` and leaves the stage to run again once approved.
    """

    summary: str = ""
    output: State = field(default_factory=dict)
    end: str | None = None
    verdict: str | None = None
    wait: bool = False
    skipped: bool = False
    # Runs this stage created, to enqueue once the stage is recorded as done (never again:
    # a done stage does not run on a retry).
    enqueue: list[int] = field(default_factory=list)


class RunContext(Protocol):
    """What a pipeline may do to the world. DB-backed in workers, in memory for the CLI."""

    run_id: int
    queue: str
    params: dict[str, Any]  # the run's inputs (issue ref, dispatch inputs, approvals)
    installation_id: int | None  # the GitHub App installation the run acts for
    settings: Settings

    @property
    def github(self) -> GitHubPort | None:
        """A GitHub client (or a recording fake); None when offline."""

    @property
    def signatures(self) -> SignatureStore | None:
        """Where CI failure fingerprints are counted; None where nothing counts them."""

    def completed_stages(self) -> dict[str, State]:
        """Outputs of the stages already recorded as done (or skipped), by stage name."""

    def stage_summaries(self) -> list[StageSummary]:
        """Each stage's latest event (status, summary, duration), in the order they started."""

    def stage_started(self, stage: str) -> None: ...

    def stage_finished(self, stage: str, status: str, summary: str, output: State) -> None:
        """status: a `StageStatus` (done, skipped, failed or waiting)."""

    def save_artifact(self, name: str, kind: str, content: str) -> None: ...

    def set_status(self, status: str, verdict: str | None = None, error: str | None = None) -> None: ...

    def log(self, message: str) -> None:
        """A progress line for the run's log (status page, CLI stderr)."""

    def enqueue_runs(self, run_ids: list[int]) -> None:
        """Start runs a stage created (a CI job opened by the ingest)."""


QueueRule = Callable[[Any], str]  # the stage's state view -> the queue it must run on


@dataclass(frozen=True)
class Stage:
    name: str
    run: Callable[[RunContext, Any], StageResult]  # (ctx, the pipeline's typed state)
    queue: QueueRule = lambda state: DEFAULT_QUEUE
    # A stage that the run can live without: its exception is recorded and the run goes on.
    optional: bool = False
    # The pipeline's state class (a `PipelineState`); `PlainState` (a dict) for tiny pipelines.
    state: Any = PlainState


@dataclass(frozen=True)
class Handoff:
    queue: str
    stage: str


@dataclass(frozen=True)
class Finished:
    status: str
    verdict: str | None = None


def on_queue(queue: str) -> QueueRule:
    return lambda state: queue


def run_pipeline(
    stages: list[Stage],
    ctx: RunContext,
    state: State | None = None,
    *,
    any_queue: bool = False,
) -> Handoff | Finished:
    """Run `stages` in order, skipping what is done; stop at the first end, wait or handoff.

    `any_queue` runs every stage here whatever its queue (the CLI, the embedded worker).
    An unexpected exception in a required stage is recorded as a failed stage and re-raised
    so the shell can decide to retry; the stages done before it stay done. An optional stage's
    is recorded and the run goes on without it, then and when it resumes (after a handoff,
    say): a failed optional stage is not run again unless its record is removed (a retry), or
    its worker was lost mid-stage (`failed_on_their_own`). The stage event holds the status,
    summary and timing; the output holds only what the stage produced.
    """
    data: State = dict(state or {})
    done = ctx.completed_stages()
    failed = failed_on_their_own(ctx.stage_summaries())
    for stage in stages:
        if stage.name in done:
            data.update(done[stage.name])
            continue
        if stage.optional and stage.name in failed:
            continue  # it failed on an earlier pass (on this worker or a repro worker) and the run went on
        view = stage.state.load(data)
        wanted = stage.queue(view)
        if not any_queue and wanted != ctx.queue:
            return Handoff(queue=wanted, stage=stage.name)
        ctx.stage_started(stage.name)
        try:
            result = stage.run(ctx, view)
            output = plain(dict(result.output))
            stage.state.check_output(stage.name, output)
        except Exception as exc:  # recorded, then re-raised or tolerated
            summary = f"{type(exc).__name__}: {exc}"
            ctx.stage_finished(stage.name, StageStatus.failed, summary, {})
            if stage.optional:
                ctx.log(f"{stage.name} failed and is optional: {summary}")
                continue
            raise
        if result.wait:
            ctx.stage_finished(stage.name, StageStatus.waiting, result.summary, output)
            ctx.set_status(RunStatus.awaiting_approval, result.verdict)
            return Finished(RunStatus.awaiting_approval, result.verdict)
        status = StageStatus.skipped if result.skipped else StageStatus.done
        ctx.stage_finished(stage.name, status, result.summary, output)
        if result.enqueue and status == StageStatus.done:
            ctx.enqueue_runs(list(result.enqueue))
        data.update(output)
        if result.end:
            ctx.set_status(result.end, result.verdict)
            return Finished(result.end, result.verdict)
    verdict = data.get("verdict")
    ctx.set_status(RunStatus.succeeded, verdict)
    return Finished(RunStatus.succeeded, verdict)
