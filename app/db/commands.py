"""`/scrub <command>` on an issue, and the same actions from the status page buttons.

The database layer knows no command words: the worker resolves a word through the run kinds
(`app.pipelines.commands`) into an action (`app.domain.CommandAction`) and `apply_command`
applies it (the caller commits and enqueues the returned run):

- `CreateRun`: a new run, whatever the issue's runs (`/scrub fuzz <seed>`).
- `ActOnLatest(approve)`: the issue's latest run of the kind awaiting approval gets
  `params["approved_by"]` and the digest of the code its waiting stage showed
  (`app.approvals`), and is queued again; the stage that waited runs again and runs that code
  only: other code (the issue edited since) waits for a new approval.
- `ActOnLatest(retry)`: the latest run starts over: its stage events are deleted, its verdict
  and error cleared, and it is queued again. It keeps its id, so its GitHub comment (marker
  keyed on the run id) is edited rather than duplicated. With no run yet, a new one starts.
- `ActOnLatest(cancel)`: the latest run, unless finished, is cancelled.
- `RerunFrom(stage, flag)`: the latest run gets `params[flag] = True` and that stage and every
  stage after it (report, comment) run again; earlier stages stay done. With no run yet, a new
  one starts with the flag set.
- `Refuse`: nothing changes; the message says why (a command's usage).

A run that is queued or running is left alone ("already in progress").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session

from app import approvals
from app.db import queries
from app.db.leases import is_stranded
from app.db.models import Run
from app.domain import (
    DEFAULT_QUEUE,
    FINISHED,
    ActOnLatest,
    CommandAction,
    CommandRequest,
    CreateRun,
    Lifecycle,
    NewRun,
    Refuse,
    RerunFrom,
    RunStatus,
    StageStatus,
    utcnow,
)

__all__ = ["Outcome", "apply_command", "approve", "cancel", "reject", "rerun_from", "retry"]


@dataclass(frozen=True)
class Outcome:
    message: str
    run_id: int | None = None
    enqueue_on: str | None = None  # the queue to enqueue `run_id` on, when something changed
    changed: bool = False  # something changed that needs no queue (a cancel)


def approve(session: Session, run: Run, user: str, seen: str | None = None) -> Outcome:
    """Approve the code the waiting stage shows (its digest is recorded with the approval).
    `seen`: the digest the approver was shown (the status page's form); when the waiting code
    is another, nothing changes (the page was stale: the run was retried and waits again)."""
    if run.status != RunStatus.awaiting_approval:
        return Outcome(f"run {run.id} is {run.status}, not awaiting approval", run.id)
    waiting = waiting_digest(session, run)
    if seen is not None and seen != (waiting or ""):
        return Outcome(f"run {run.id} now waits with other code than the page showed: reload it and review the code again",
                       run.id)
    run.params = approvals.approve(run.params, user, waiting)
    return _requeue(session, run, f"run {run.id} approved by {user}")


def waiting_digest(session: Session, run: Run) -> str | None:
    """The digest of the code the run's waiting stage would run (None: it names no code)."""
    assert run.id is not None
    waiting = next((e for e in reversed(queries.stage_events(session, run.id)) if e.status == StageStatus.waiting), None)
    value = (waiting.output or {}).get(approvals.OUTPUT_KEY) if waiting is not None else None
    return value if isinstance(value, str) and value else None


def cancel(session: Session, run: Run, user: str) -> Outcome:
    """Stop a run that has not finished: it is `cancelled` at once; its worker, if one holds
    it, stops before its next stage (the lease is gone)."""
    if run.status in FINISHED:
        return Outcome(f"run {run.id} is {run.status} already", run.id)
    run.status, run.ended_at, run.error = RunStatus.cancelled, utcnow(), f"cancelled by {user}"
    run.lease_owner, run.lease_expires_at = None, None
    session.add(queries.touch(run))
    return Outcome(f"run {run.id} cancelled by {user}", run.id, changed=True)


def reject(session: Session, run: Run, user: str, reason: str) -> Outcome:
    """Cancel a run that waits for approval, with the reason on the run (its `error`)."""
    if run.status != RunStatus.awaiting_approval:
        return Outcome(f"run {run.id} is {run.status}, not awaiting approval", run.id)
    reason = " ".join(reason.split())[:500] or "no reason given"
    run.status, run.ended_at = RunStatus.cancelled, utcnow()
    run.lease_owner, run.lease_expires_at = None, None
    run.error = f"rejected by {user}: {reason}"
    run.params = {**(run.params or {}), "rejected_by": user}
    session.add(queries.touch(run))
    return Outcome(f"run {run.id} rejected by {user}", run.id, changed=True)


def retry(session: Session, run: Run) -> Outcome:
    """Also for a run stranded as running by a worker that died (its lease expired)."""
    if run.status not in FINISHED and run.status != RunStatus.awaiting_approval and not is_stranded(run):
        return Outcome(f"run {run.id} is already in progress", run.id)
    assert run.id is not None
    queries.delete_stage_events(session, run.id)
    run.verdict, run.error, run.ended_at = None, None, None
    run.attempts = 0
    return _requeue(session, run, f"run {run.id} restarted")


def rerun_from(session: Session, run: Run, stage: str, stage_names: Sequence[str], flag: str) -> Outcome:
    """Set `params[flag]` and redo `stage` and everything after it.

    `stage_names` are the run kind's stages in order. A kind without that stage is refused:
    deleting "from an unknown stage" used to delete every stage event and silently restart
    the whole run.
    """
    if run.status not in FINISHED and run.status != RunStatus.awaiting_approval:
        return Outcome(f"run {run.id} is already in progress", run.id)
    assert run.id is not None
    names = list(stage_names)
    if stage not in names:
        return Outcome(f"run {run.id} ({run.kind}) has no {stage} stage", run.id)
    queries.delete_stage_events(session, run.id, names[names.index(stage):])
    run.params = {**(run.params or {}), flag: True}
    run.verdict, run.error, run.ended_at = None, None, None
    return _requeue(session, run, f"run {run.id}: {stage} again")


def apply_command(session: Session, request: CommandRequest, action: CommandAction) -> Outcome:
    """Apply what the worker resolved `request` to, on the issue's runs; the caller commits and enqueues."""
    if isinstance(action, Refuse):
        return Outcome(action.message)
    if isinstance(action, CreateRun):
        return create(session, request, action.run)
    status = RunStatus.awaiting_approval if isinstance(action, ActOnLatest) and action.action == Lifecycle.approve else None
    run = queries.latest_issue_run(session, request.repo, request.issue, status, kind=action.kind)
    if isinstance(action, RerunFrom):
        return rerun_from(session, run, action.stage, action.stages, action.flag) if run else \
            create(session, request, action.otherwise)
    if run is None:
        if action.otherwise is not None:
            return create(session, request, action.otherwise)
        return Outcome("no run is awaiting approval" if status else "no run to act on")
    if action.action == Lifecycle.approve:
        return approve(session, run, request.user)
    if action.action == Lifecycle.retry:
        return retry(session, run)
    return cancel(session, run, request.user)


def create(session: Session, request: CommandRequest, new: NewRun) -> Outcome:
    """A new run for the issue the command was typed on."""
    run = queries.create_run(
        session,
        kind=new.kind,
        repo=request.repo,
        issue=request.issue,
        target=new.target,
        trigger=new.trigger,
        installation_id=request.installation_id,
        params=new.params,
    )
    return Outcome(new.started.format(id=run.id), run.id, DEFAULT_QUEUE)


def _requeue(session: Session, run: Run, message: str) -> Outcome:
    run.status, run.queue = RunStatus.queued, DEFAULT_QUEUE
    run.lease_owner, run.lease_expires_at = None, None
    session.add(queries.touch(run))
    return Outcome(message, run.id, run.queue)
