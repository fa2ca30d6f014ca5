"""`/`: the runs; `/runs/{id}`: one run's stage timeline, artifacts and buttons;
`/runs/{id}/artifacts/{name}`: one artifact as plain text.

Everything shown comes from untrusted sources (issue text, repro output, CI logs): templates
autoescape, and the Content-Security-Policy allows only this site's own stylesheet and
script, so markup that slipped through could still not run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, PlainTextResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader

from app.api.deps import SessionDep
from app.api.limits import RunId
from app.db import queries
from app.db.models import FINISHED, RunStatus
from app.web import display

ARTIFACT_DISPLAY_LIMIT = 200_000  # characters shown per artifact; the raw view has them all
REFRESH_SECONDS = 5  # how often a page with an active run updates itself (static/live.js)
HERE = Path(__file__).parent

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}

router = APIRouter()
static_files = StaticFiles(directory=HERE / "static")  # mounted at /static by create_app


def _templates() -> Jinja2Templates:
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True)
    env.filters.update(display.FILTERS)
    return Jinja2Templates(env=env)


templates = _templates()


def _page(request: Request, name: str, context: dict[str, Any]) -> HTMLResponse:
    return templates.TemplateResponse(request, name, context, headers=SECURITY_HEADERS)


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
def runs_page(request: Request, session: SessionDep) -> HTMLResponse:
    runs = queries.list_runs(session, limit=200)
    active = any(run.status not in FINISHED for run in runs)
    return _page(request, "runs.html", {"runs": runs, "refresh": REFRESH_SECONDS if active else None})


@router.get("/runs/{run_id}", response_class=HTMLResponse, include_in_schema=False)
def run_page(request: Request, run_id: RunId, session: SessionDep) -> HTMLResponse:
    detail = queries.run_detail(session, run_id)
    if detail is None:
        raise HTTPException(404, f"run {run_id} not found")
    run = detail.run
    return _page(
        request,
        "run.html",
        {
            "run": run,
            "stages": detail.stages,
            "artifacts": display.reading_order(detail.artifacts),
            "pull_request": display.pull_request_url(detail.stages),
            "limit": ARTIFACT_DISPLAY_LIMIT,
            "can_approve": run.status == RunStatus.awaiting_approval,
            "can_retry": run.status in FINISHED or run.status == RunStatus.awaiting_approval,
            "refresh": None if run.status in FINISHED else REFRESH_SECONDS,
        },
    )


@router.get("/runs/{run_id}/artifacts/{name}", response_class=PlainTextResponse, include_in_schema=False)
def artifact_text(run_id: RunId, name: str, session: SessionDep) -> PlainTextResponse:
    """The whole artifact as text/plain (never rendered: `nosniff`, and a sandbox CSP)."""
    artifact = queries.find_artifact(session, run_id, name)
    if artifact is None or artifact.content is None:
        raise HTTPException(404, f"run {run_id} has no artifact {name!r} with text")
    headers = {**SECURITY_HEADERS, "Content-Security-Policy": "sandbox; default-src 'none'"}
    return PlainTextResponse(artifact.content, headers=headers)
