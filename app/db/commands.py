"""`/scrub <command>` on an issue, and the same actions from the status page buttons.

Semantics (each acts on the issue's latest run; the caller enqueues the returned run):

- `approve`: the run awaiting approval gets `params["approved_by"]` and is queued again; the
  stage that waited runs again and sees the approval.
- `retry`: the latest finished run starts over: its stage events are deleted, its verdict and
  error cleared, and it is queued again. It keeps its id, so its GitHub comment (marker keyed
  on the run id) is edited rather than duplicated. With no run yet, a new one starts.
- `bisect` / `minimize`: the latest run gets `params["force_bisect"|"force_minimize"] = True`
  and that stage and every stage after it (report, comment) run again; earlier stages stay done.
  With no run yet, a new one starts with the flag set.

A run that is queued or running is left alone ("already in progress").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session

from app.db import queries
from app.db.leases import is_stranded
from app.db.models import Run
from app.domain import utcnow
from app.domain import DEFAULT_QUEUE, FINISHED, FORCE_FLAGS, HELP_TEXT, Command, CommandRequest, RunStatus, parse_command

__all__ = ["HELP_TEXT", "Command", "CommandRequest", "Outcome", "apply_command", "approve", "cancel", "parse_command", "rerun_from", "retry"]

@dataclass(frozen=True)
class Outcome:
    message: str
    run_id: int | None = None
    enqueue_on: str | None = None  # the queue to enqueue `run_id` on, when something changed
    changed: bool = False  # something changed that needs no queue (a cancel)


def approve(session: Session, run: Run, user: str) -> Outcome:
    if run.status != RunStatus.awaiting_approval:
        return Outcome(f"run {run.id} is {run.status}, not awaiting approval", run.id)
    run.params = {**(run.params or {}), "approved_by": user}
    return _requeue(session, run, f"run {run.id} approved by {user}")


def cancel(session: Session, run: Run, user: str) -> Outcome:
    """Stop a run that has not finished: it is `cancelled` at once; its worker, if one holds
    it, stops before its next stage (the lease is gone)."""
    if run.status in FINISHED:
        return Outcome(f"run {run.id} is {run.status} already", run.id)
    run.status, run.ended_at, run.error = RunStatus.cancelled, utcnow(), f"cancelled by {user}"
    run.lease_owner, run.lease_expires_at = None, None
    session.add(queries.touch(run))
    return Outcome(f"run {run.id} cancelled by {user}", run.id, changed=True)


def retry(session: Session, run: Run) -> Outcome:
    """Also for a run stranded as running by a worker that died (its lease expired)."""
    if run.status not in FINISHED and run.status != RunStatus.awaiting_approval and not is_stranded(run):
        return Outcome(f"run {run.id} is already in progress", run.id)
    assert run.id is not None
    queries.delete_stage_events(session, run.id)
    run.verdict, run.error, run.ended_at = None, None, None
    run.attempts = 0
    return _requeue(session, run, f"run {run.id} restarted")


def rerun_from(session: Session, run: Run, command: str, stage_names: Sequence[str]) -> Outcome:
    """Force the stage of `command` (bisect, minimize) and redo it and everything after it.

    `stage_names` are the run kind's stages in order (`app.pipelines.registry.stage_names`). A
    kind without that stage is refused: deleting "from an unknown stage" used to delete every
    stage event and silently restart the whole run.
    """
    if run.status not in FINISHED and run.status != RunStatus.awaiting_approval:
        return Outcome(f"run {run.id} is already in progress", run.id)
    assert run.id is not None
    names = list(stage_names)
    if command not in names:
        return Outcome(f"run {run.id} ({run.kind}) has no {command} stage", run.id)
    queries.delete_stage_events(session, run.id, names[names.index(command):])
    run.params = {**(run.params or {}), FORCE_FLAGS[command]: True}
    run.verdict, run.error, run.ended_at = None, None, None
    return _requeue(session, run, f"run {run.id}: {command} again")


def apply_command(session: Session, request: CommandRequest, stage_names: Sequence[str]) -> Outcome:
    """Act on the issue's latest run (or start one); the caller commits and enqueues.

    `stage_names`: the issue pipeline's stages in order, for `bisect` / `minimize`."""
    command = request.command
    if command == "approve":
        run = queries.latest_issue_run(session, request.repo, request.issue, RunStatus.awaiting_approval)
        return approve(session, run, request.user) if run else Outcome("no run is awaiting approval")
    run = queries.latest_issue_run(session, request.repo, request.issue)
    if run is None:
        return _start_issue_run(session, request, command)
    if command == "retry":
        return retry(session, run)
    if command in FORCE_FLAGS:
        return rerun_from(session, run, command, stage_names)
    raise ValueError(f"unknown command {command!r}")


def _start_issue_run(session: Session, request: CommandRequest, command: str) -> Outcome:
    params: dict = {"repo": request.repo, "issue": request.issue, "url": request.issue_url, "requested_by": request.user}
    if command in FORCE_FLAGS:
        params[FORCE_FLAGS[command]] = True
    run = queries.create_run(
        session,
        kind="issue",
        repo=request.repo,
        issue=request.issue,
        target=request.issue_url,
        trigger=f"comment:{command}",
        installation_id=request.installation_id,
        params=params,
    )
    return Outcome(f"run {run.id} started", run.id, DEFAULT_QUEUE)


def _requeue(session: Session, run: Run, message: str) -> Outcome:
    run.status, run.queue = RunStatus.queued, DEFAULT_QUEUE
    run.lease_owner, run.lease_expires_at = None, None
    session.add(queries.touch(run))
    return Outcome(message, run.id, run.queue)
