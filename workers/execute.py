"""What the tasks do, as plain functions over injected services (tests call them directly).

`execute_run` loads a run, runs its pipeline on a DB-backed context (the trusted stages: this
worker serves `default`), and on a handoff sends the next stages to their repro queue as a job
(`workers/handoff.py`; the result comes back through `workers/results.py`). A transient error (network, database
connection) propagates so the task can retry it; any other error fails the run with a
readable message. `execute_command` is a `/scrub` command: its word resolved through the run
kinds (`app.pipelines.commands`), then the permission check (`app.github.permissions`), then
the action applied to the database (`app.db.commands.apply_command`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Callable

import httpx
from sqlalchemy.exc import IntegrityError, OperationalError

from app.db import leases
from app.db.context import DbRunContext
from app.db.models import FINISHED, Run, RunStatus
from app.db.session import Database
from app.github.permissions import UNKNOWN, may_write, role_of
from app.github.port import GitHubAPIError
from app.pipelines import commands, registry
from app.pipelines.base import Handoff, Stage, run_pipeline
from app.db.commands import apply_command
from app.domain import DEFAULT_QUEUE, CommandAction, CommandRequest
from workers.enqueue import Enqueuer
from workers.handoff import send_job
from workers.lease import Heartbeat, LeasedRunContext, LeaseLost, new_owner

log = logging.getLogger(__name__)

TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    httpx.TransportError,
    ConnectionError,
    TimeoutError,
    OperationalError,
)


def is_transient(exc: BaseException) -> bool:
    """Worth retrying later: the network, the database connection, GitHub 5xx / rate limits."""
    return isinstance(exc, TRANSIENT_ERRORS) or (isinstance(exc, GitHubAPIError) and exc.transient)


@dataclass
class WorkerServices:
    settings: Any
    database: Database
    enqueuer: Enqueuer
    github_for: Callable[[int | None], Any]  # installation id -> GitHubPort
    stages_for: Callable[[str], list[Stage]] = registry.stages_for
    resolve_command: Callable[[CommandRequest], CommandAction | None] = commands.resolve


def execute_run(run_id: int, services: WorkerServices) -> str:
    """Claim the run (its lease), run its pipeline with a heartbeat, and let the lease go."""
    with services.database.session() as session:
        run = session.get(Run, run_id)
    if run is None:
        log.warning("run %s does not exist; message dropped", run_id)
        return "missing"
    if run.status in FINISHED or run.status == RunStatus.awaiting_approval:
        return f"already {run.status}"  # a duplicate message: nothing to do
    lease_s = float(getattr(services.settings, "lease_s", 60.0))
    owner = new_owner()
    if not leases.claim(services.database, run_id, owner, lease_s):
        return "held by another worker"  # a duplicate delivery while the run is alive elsewhere
    heartbeat = Heartbeat(services.database, run_id, owner, lease_s)
    ctx = LeasedRunContext(
        services.database,
        run,
        services.settings,
        github_factory=lambda: services.github_for(run.installation_id),
        on_spawned=lambda spawned: [services.enqueuer.run_pipeline(child) for child in spawned],
        owner=owner,
        heartbeat=heartbeat,
    )
    ctx.queue = DEFAULT_QUEUE  # a trusted worker: the stages of repro queues go out as jobs
    try:
        with heartbeat:
            return _execute(run, ctx, services)
    except LeaseLost as exc:
        log.warning("%s; stopping", exc)
        return "lease lost"
    finally:
        # Also after a transient error: the task's retry claims the unleased run; were that
        # retry lost too, the reaper takes an unleased running run after an hour.
        leases.release(services.database, run_id, owner)


def _execute(run: Run, ctx: LeasedRunContext, services: WorkerServices) -> str:
    try:
        stages = services.stages_for(run.kind)
    except registry.PipelineUnavailable as exc:
        ctx.set_status(RunStatus.failed, error=str(exc))
        return RunStatus.failed
    try:
        result = run_pipeline(stages, ctx)
    except LeaseLost:
        raise
    except Exception as exc:
        if is_transient(exc):
            raise
        # The traceback stays in the worker's log; the run (served by the API) gets one short line.
        log.exception("run %s failed", run.id)
        ctx.log(f"failed: {short_error(exc)}")
        ctx.set_status(RunStatus.failed, error=short_error(exc))
        return RunStatus.failed
    if isinstance(result, Handoff):  # a repro queue: its stages go to a repro worker (workers/jobs.py)
        return send_job(run, ctx, result.queue, result.stage, services)
    return result.status


def short_error(exc: BaseException, limit: int = 300) -> str:
    """`Type: message`, first line only, without server paths: what a run's `error` shows."""
    first = (str(exc).strip().splitlines() or [""])[0]
    first = _SERVER_PATH.sub("<path>", first)
    return f"{type(exc).__name__}: {first}"[:limit].rstrip(": ")


_SERVER_PATH = re.compile(r"(?<![\w:/])/(?:[\w.+-]+/)+[\w.+-]*")


def fail_run(run_id: int, services: WorkerServices, error: str) -> None:
    """Give up on a run (a transient error that outlived its retries)."""
    with services.database.session() as session:
        run = session.get(Run, run_id)
    if run is not None and run.status not in FINISHED:
        DbRunContext(services.database, run, services.settings).set_status(RunStatus.failed, error=error)


def execute_command(request: CommandRequest, services: WorkerServices) -> str:
    """A word no run kind declares gets the help, for collaborators; every other command needs
    write permission on the repository (asked of GitHub; an error is no permission). A refusal
    is replied to on the issue and changes nothing; it never raises, so the command is not
    retried or lost silently."""
    github = services.github_for(request.installation_id)
    action = services.resolve_command(request)
    if action is None:
        return _help(github, request)
    role = role_of(github, request.repo, request.user)
    if not may_write(role):
        return _refuse(github, request, role)
    with services.database.session() as session:
        outcome = apply_command(session, request, action)
        try:
            session.commit()
        except IntegrityError:  # a run of this issue became active meanwhile (a label, a button)
            session.rollback()
            return "ignored: another run of this issue is active"
    if outcome.enqueue_on and outcome.run_id is not None:
        services.enqueuer.run_pipeline(outcome.run_id, outcome.enqueue_on)
    return outcome.message


def _help(github: Any, request: CommandRequest) -> str:
    """The help reply changes nothing: it keeps its collaborator check (docs/security.md)."""
    try:
        collaborator = github.is_collaborator(request.repo, request.user)
    except Exception as exc:  # fail closed: no answer, no help
        log.warning("collaborator check of %s on %s failed: %s", request.user, request.repo, exc)
        collaborator = False
    if not collaborator:
        return f"ignored: {request.user} is not a collaborator of {request.repo}"
    github.create_comment(request.repo, request.issue, commands.help_text())
    return "help sent"


def _refuse(github: Any, request: CommandRequest, role: str) -> str:
    command = f"`/scrub {request.command}`"
    if role == UNKNOWN:
        why = f"could not check {request.user}'s permission on {request.repo}"
        reply = (f"@{request.user} Scrubbot could not check your permission on {request.repo} with GitHub, "
                 f"so {command} was refused. Nothing was changed; please comment it again later.")
    else:
        why = f"{request.user}'s role on {request.repo} is {role}; /scrub {request.command} needs write"
        reply = (f"@{request.user} {command} needs write permission on {request.repo} (admin, maintain or "
                 f"write); your permission is `{role}`. Nothing was changed.")
    try:
        github.create_comment(request.repo, request.issue, reply)
    except Exception as exc:  # the refusal stands without its reply
        log.warning("could not reply to %s's refused %s: %s", request.user, command, exc)
    return f"refused: {why}"
