"""The status page's Jinja environment and response headers, shared by its route modules.

Everything shown comes from untrusted sources (issue text, repro output, CI logs): templates
autoescape, markup is only ever built by `app.web.render`, and the Content-Security-Policy
allows only this site's own stylesheet and script, so markup that slipped through could still
not run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader

from app.api.csrf import csrf_field
from app.domain import RunStatus
from app.web import display

HERE = Path(__file__).parent

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def _templates() -> Jinja2Templates:
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True)
    env.filters.update(display.FILTERS)
    env.globals["csrf_field"] = csrf_field  # `{{ csrf_field() }}` in every POST form
    env.globals["RunStatus"] = RunStatus  # statuses compared as the domain's words, never typed out
    return Jinja2Templates(env=env)


templates = _templates()


def page(request: Request, name: str, context: dict[str, Any], viewer: Any = None, status_code: int = 200) -> HTMLResponse:
    """Every page knows who is looking (the header's sign-in / sign-out and local-mode notice)."""
    people = request.app.state.services.people
    context = {**context, "viewer": viewer, "local_mode": people.local}
    return templates.TemplateResponse(request, name, context, status_code=status_code, headers=SECURITY_HEADERS)


def unreadable(request: Request, viewer: Any, what: str) -> RedirectResponse:
    """What someone who may not see `what` gets, the same whether it exists or not: anonymous
    where nothing is public, the sign-in page; anyone else a 404 (a run of a private repository
    is not told apart from a missing one; the header offers to sign in)."""
    if not viewer.signed_in and not request.app.state.services.settings.public_read:
        return RedirectResponse(f"/login?next={request.url.path}", status_code=303)
    raise HTTPException(404, f"{what} not found")


def fragment(request: Request, name: str, context: dict[str, Any]) -> str:
    """A template rendered to a string (what the live updates send)."""
    return templates.get_template(name).render({"request": request, **context})
