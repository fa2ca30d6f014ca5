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
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader

from app.api.access import Viewer
from app.api.csrf import csrf_field
from app.api.deps import ServicesDep, SessionDep, ViewerDep
from app.api.limits import RunId
from app.db import queries
from app.db.models import FINISHED, Run, RunStatus
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
    env.globals["csrf_field"] = csrf_field  # `{{ csrf_field() }}` in every POST form
    return Jinja2Templates(env=env)


templates = _templates()


def _page(request: Request, name: str, context: dict[str, Any], viewer: Viewer) -> HTMLResponse:
    """Every page knows who is looking (the header's sign-in / sign-out and local-mode notice)."""
    people = request.app.state.services.people
    context = {**context, "viewer": viewer, "local_mode": people.local}
    return templates.TemplateResponse(request, name, context, headers=SECURITY_HEADERS)


def _unreadable(request: Request, viewer: Viewer, what: str) -> Response:
    """Anonymous in front of something private: sign in first; signed in: it does not exist."""
    if not viewer.signed_in:
        return RedirectResponse(f"/login?next={request.url.path}", status_code=303)
    raise HTTPException(404, f"{what} not found")


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
def runs_page(request: Request, session: SessionDep, services: ServicesDep, viewer: ViewerDep) -> Response:
    if not viewer.signed_in and not services.settings.public_read:
        return _unreadable(request, viewer, "runs")
    runs = [run for run in queries.list_runs(session, limit=200) if services.people.can_read(viewer, run)]
    active = any(run.status not in FINISHED for run in runs)
    return _page(request, "runs.html", {"runs": runs, "refresh": REFRESH_SECONDS if active else None}, viewer)


@router.get("/runs/{run_id}", response_class=HTMLResponse, include_in_schema=False)
def run_page(request: Request, run_id: RunId, session: SessionDep, services: ServicesDep, viewer: ViewerDep) -> Response:
    detail = queries.run_detail(session, run_id)
    if detail is None:
        raise HTTPException(404, f"run {run_id} not found")
    if not services.people.can_read(viewer, detail.run):
        return _unreadable(request, viewer, f"run {run_id}")
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
            # Buttons for whoever is signed in; the POST checks write permission on the repository.
            "can_approve": viewer.signed_in and run.status == RunStatus.awaiting_approval,
            "can_retry": viewer.signed_in and (run.status in FINISHED or run.status == RunStatus.awaiting_approval),
            "can_cancel": viewer.signed_in and run.status not in FINISHED,
            "refresh": None if run.status in FINISHED else REFRESH_SECONDS,
        },
        viewer,
    )


@router.get("/runs/{run_id}/artifacts/{name}", response_class=PlainTextResponse, include_in_schema=False)
def artifact_text(
    request: Request, run_id: RunId, name: str, session: SessionDep, services: ServicesDep, viewer: ViewerDep
) -> Response:
    """The whole artifact as text/plain (never rendered: `nosniff`, and a sandbox CSP)."""
    run = session.get(Run, run_id)
    if run is not None and not services.people.can_read(viewer, run):
        return _unreadable(request, viewer, f"run {run_id}")
    artifact = queries.find_artifact(session, run_id, name)
    if artifact is None or artifact.content is None:
        raise HTTPException(404, f"run {run_id} has no artifact {name!r} with text")
    headers = {**SECURITY_HEADERS, "Content-Security-Policy": "sandbox; default-src 'none'"}
    return PlainTextResponse(artifact.content, headers=headers)
