"""`/api/v1/runs`: the runs, newest first; one run with its stages and artifacts; the buttons."""

from __future__ import annotations

from typing import Any

from urllib.parse import parse_qs

from fastapi import APIRouter, HTTPException, Request
from starlette.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, RedirectResponse, Response

from sqlalchemy.exc import IntegrityError

from app.api.access import Viewer
from app.api.deps import ActorDep, ServicesDep, SessionDep, ViewerDep
from app.api.limits import Offset, RunId, Sha256
from app.db import queries
from app.db.models import Artifact, Run, StageEvent
from app.db import commands

router = APIRouter(prefix="/api/v1")


def run_json(run: Run) -> dict[str, Any]:
    return {
        **run.model_dump(include={"id", "kind", "repo", "issue", "target", "trigger", "status", "verdict", "queue", "error", "params", "title"}),
        **{name: _iso(getattr(run, name)) for name in ("created_at", "updated_at", "started_at", "ended_at")},
    }


def stage_json(event: StageEvent) -> dict[str, Any]:
    duration = (event.ended_at - event.started_at).total_seconds() if event.ended_at else None
    return {
        **event.model_dump(include={"stage", "status", "summary", "output", "attempt"}),
        "started_at": _iso(event.started_at),
        "ended_at": _iso(event.ended_at),
        "duration_s": duration,
    }


def artifact_json(artifact: Artifact) -> dict[str, Any]:
    return {**artifact.model_dump(include={"name", "kind", "content", "path"}), "created_at": _iso(artifact.created_at)}


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


@router.get("/runs")
def list_runs(session: SessionDep, services: ServicesDep, viewer: ViewerDep, limit: int = 100, offset: Offset = 0) -> list[dict[str, Any]]:
    if not viewer.signed_in and not services.settings.public_read:
        raise HTTPException(401, "sign in to see runs", headers={"WWW-Authenticate": "Bearer"})
    runs = queries.list_runs(session, min(max(limit, 1), 500), max(offset, 0))
    return [run_json(run) for run in runs if services.people.can_read(viewer, run)]


@router.get("/runs/{run_id}")
def get_run(run_id: RunId, session: SessionDep, services: ServicesDep, viewer: ViewerDep) -> dict[str, Any]:
    """A run of a private repository is, to whoever may not read it, the same 404 as a run that
    does not exist (anonymous, when nothing is public: the same 401 for both)."""
    if not viewer.signed_in and not services.settings.public_read:
        raise HTTPException(401, "sign in to see runs", headers={"WWW-Authenticate": "Bearer"})
    detail = queries.run_detail(session, run_id)
    if detail is None or not services.people.can_read(viewer, detail.run):
        raise HTTPException(404, f"run {run_id} not found")
    return {
        **run_json(detail.run),
        "stages": [stage_json(e) for e in detail.stages],
        "artifacts": [artifact_json(a) for a in detail.artifacts],
    }


@router.post("/runs/{run_id}/approve")
def approve_run(run_id: RunId, session: SessionDep, services: ServicesDep, actor: ActorDep, next: str | None = None,
                sha256: Sha256 = None) -> Response:
    """Same as `/scrub approve`: write permission on the run's repository, CSRF-checked. The
    approval is of the code the run waits with (its digest is recorded); `sha256`: the digest of
    the code the approver saw (the status page sends it): other code waiting is a 409."""
    return _act(run_id, session, services, actor,
                lambda run: commands.approve(session, run, actor.login or "", seen=sha256), next)


@router.post("/runs/{run_id}/reject")
async def reject_run(request: Request, run_id: RunId, session: SessionDep, services: ServicesDep, actor: ActorDep,
                     next: str | None = None) -> Response:
    """Cancel a run awaiting approval (write permission, CSRF-checked, like approve). `reason`:
    a form field (the status page) or query parameter."""
    form = parse_qs((await request.body()).decode("utf-8", "replace")) if _is_form(request) else {}
    reason = (form.get("reason") or [request.query_params.get("reason") or ""])[0]
    reject = lambda run: commands.reject(session, run, actor.login or "", reason)  # noqa: E731
    return await run_in_threadpool(_act, run_id, session, services, actor, reject, next)


def _is_form(request: Request) -> bool:
    return request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded")


@router.post("/runs/{run_id}/retry")
def retry_run(run_id: RunId, session: SessionDep, services: ServicesDep, actor: ActorDep, next: str | None = None) -> Response:
    return _act(run_id, session, services, actor, lambda run: commands.retry(session, run), next)


@router.post("/runs/{run_id}/cancel")
def cancel_run(run_id: RunId, session: SessionDep, services: ServicesDep, actor: ActorDep, next: str | None = None) -> Response:
    return _act(run_id, session, services, actor, lambda run: commands.cancel(session, run, actor.login or ""), next)


def _act(run_id: int, session: Any, services: Any, actor: Viewer, action: Any, next_page: str | None) -> Response:
    run = session.get(Run, run_id)
    if run is None or not services.people.can_read(actor, run):
        raise HTTPException(404, f"run {run_id} not found")
    if not services.people.can_write(actor, run):
        raise HTTPException(403, f"{actor.login} needs write permission on {run.repo or 'this run'}")
    outcome = action(run)
    try:
        session.commit()
    except IntegrityError:  # another run of the same issue or signature is active
        session.rollback()
        return JSONResponse({"message": f"another run is active for {run.target or run.repo}", "run_id": run_id, "queued": False}, 409)
    if outcome.enqueue_on:
        services.enqueuer.run_pipeline(run_id, outcome.enqueue_on)
    if next_page and next_page.startswith("/") and not next_page.startswith("//"):
        return RedirectResponse(next_page, status_code=303)
    status_code = 202 if outcome.enqueue_on else (200 if outcome.changed else 409)
    return JSONResponse({"message": outcome.message, "run_id": run_id, "queued": bool(outcome.enqueue_on)}, status_code)
