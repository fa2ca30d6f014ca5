"""Errors a person sees: a browser that asks for a page that is not there (`/runs/999`) gets an
HTML page with a way back, not raw JSON. The JSON API, the webhook and scripts (no `text/html`
in `Accept`) keep FastAPI's JSON answers."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler, request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response

from app.web.templating import SECURITY_HEADERS, templates

MACHINE_PATHS = ("/api/", "/webhooks/", "/healthz", "/metrics", "/openapi.json", "/static/")


def wants_html(request: Request) -> bool:
    """A browser navigating to a page of the status page (not the API, not a script)."""
    if request.url.path.startswith(MACHINE_PATHS):
        return False
    return "text/html" in request.headers.get("accept", "")


def error_page(request: Request, status_code: int, message: str, headers: dict[str, str] | None = None) -> Response:
    people = getattr(getattr(request.app.state, "services", None), "people", None)
    context: dict[str, Any] = {"status_code": status_code, "message": message, "viewer": None,
                               "local_mode": bool(getattr(people, "local", False))}
    return templates.TemplateResponse(request, "error.html", context, status_code=status_code,
                                      headers={**SECURITY_HEADERS, **(headers or {})})


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if not wants_html(request):
        return await http_exception_handler(request, exc)
    return error_page(request, exc.status_code, str(exc.detail), dict(exc.headers or {}))


async def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    if not wants_html(request):
        return await request_validation_exception_handler(request, exc)
    where = ", ".join(str(error.get("loc", ["?"])[-1]) for error in exc.errors()) or "the address"
    return error_page(request, 422, f"this address is not valid ({where})")


def install(app: FastAPI) -> None:
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
