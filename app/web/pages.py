"""`/`: the runs; `/runs/{id}`: one run's stage timeline, artifacts and buttons."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader

from app.api.deps import SessionDep
from app.db import queries
from app.db.models import FINISHED, Run, RunStatus

ARTIFACT_DISPLAY_LIMIT = 200_000  # characters shown per artifact
REFRESH_SECONDS = 5

router = APIRouter()


def _as_utc(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def ago(value: datetime | None) -> str:
    if value is None:
        return ""
    return duration((datetime.now(timezone.utc) - _as_utc(value)).total_seconds()) + " ago"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.1f}s" if seconds < 10 else f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds // 60:.0f}m {seconds % 60:.0f}s"
    if seconds < 86400:
        return f"{seconds // 3600:.0f}h {seconds % 3600 // 60:.0f}m"
    return f"{seconds // 86400:.0f}d"


def stage_duration(event) -> str:
    end = event.ended_at or datetime.now(timezone.utc)
    return duration((_as_utc(end) - _as_utc(event.started_at)).total_seconds())


def subject(run: Run) -> str:
    """What the run is about: `#123`, `CI run 456`, or its target."""
    if run.issue is not None:
        return f"#{run.issue}"
    if run.params.get("workflow_run_id"):
        return f"CI run {run.params['workflow_run_id']}"
    return run.target or "-"


def _templates() -> Jinja2Templates:
    env = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"), autoescape=True)
    env.filters.update(ago=ago, duration=duration, stage_duration=stage_duration, subject=subject)
    return Jinja2Templates(env=env)


templates = _templates()


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
def runs_page(request: Request, session: SessionDep) -> HTMLResponse:
    runs = queries.list_runs(session, limit=200)
    return templates.TemplateResponse(
        request, "runs.html", {"runs": runs, "refresh": REFRESH_SECONDS if any(r.status not in FINISHED for r in runs) else None}
    )


@router.get("/runs/{run_id}", response_class=HTMLResponse, include_in_schema=False)
def run_page(request: Request, run_id: int, session: SessionDep) -> HTMLResponse:
    detail = queries.run_detail(session, run_id)
    if detail is None:
        raise HTTPException(404, f"run {run_id} not found")
    run = detail.run
    return templates.TemplateResponse(
        request,
        "run.html",
        {
            "run": run,
            "stages": detail.stages,
            "artifacts": detail.artifacts,
            "limit": ARTIFACT_DISPLAY_LIMIT,
            "can_approve": run.status == RunStatus.awaiting_approval,
            "can_retry": run.status in FINISHED or run.status == RunStatus.awaiting_approval,
            "refresh": None if run.status in FINISHED else REFRESH_SECONDS,
        },
    )
