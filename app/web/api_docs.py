"""`/docs`: the JSON API described on one plain page, made from the app's OpenAPI schema on
the server. FastAPI's own pages load Swagger UI or ReDoc from a CDN: they break offline and
under this site's Content-Security-Policy (only its own scripts and styles). `/openapi.json`
stays for tools."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.web.templating import SECURITY_HEADERS, templates

router = APIRouter()
METHODS = ("get", "post", "put", "patch", "delete")


def operations(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """Each operation: method, path, summary, description, parameters, body and responses."""
    found = []
    for path, item in sorted(schema.get("paths", {}).items()):
        for method in METHODS:
            operation = item.get(method)
            if not isinstance(operation, dict):
                continue
            body = ((operation.get("requestBody") or {}).get("content") or {})
            found.append({
                "method": method.upper(), "path": path, "summary": operation.get("summary", ""),
                "description": operation.get("description", ""),
                "parameters": [{"name": p.get("name"), "in": p.get("in"), "required": bool(p.get("required")),
                                "type": _type(p.get("schema") or {})} for p in operation.get("parameters", [])],
                "body": ", ".join(body),
                "responses": [(code, (r or {}).get("description", "")) for code, r in
                              sorted((operation.get("responses") or {}).items())],
            })
    return found


def _type(schema: dict[str, Any]) -> str:
    if "anyOf" in schema:
        return " or ".join(_type(s) for s in schema["anyOf"])
    return str(schema.get("type") or schema.get("$ref", "").rsplit("/", 1)[-1] or "any")


@router.get("/docs", response_class=HTMLResponse, include_in_schema=False)
def api_docs(request: Request) -> Any:
    schema = request.app.openapi()
    people = request.app.state.services.people
    return templates.TemplateResponse(request, "api_docs.html", {
        "title": schema.get("info", {}).get("title", "API"), "version": schema.get("info", {}).get("version", ""),
        "operations": operations(schema), "viewer": None, "local_mode": people.local,
    }, headers=SECURITY_HEADERS)
