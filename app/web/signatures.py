"""`/signatures/{owner}/{name}/{fingerprint}`: a failure signature's page; `/flaky`: the flaky
tests, the most often failing first. Access as for the JSON (`app.api.signatures`). Also what
a run page shows of the signatures it classified (`run_signatures`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from app.api.deps import ServicesDep, SessionDep, ViewerDep
from app.api.signatures import Fingerprint, Name, readable_flaky, readable_view
from app.db.models import StageEvent
from app.web.templating import page, unreadable

router = APIRouter()


def signature_url(repo: str, fingerprint: str) -> str:
    return f"/signatures/{repo}/{fingerprint[:12]}"


def run_signatures(kind: str, repo: str, params: dict[str, Any], stages: list[StageEvent]) -> list[dict[str, Any]]:
    """The signatures a run classified (an ingest) or works on (a CI job): fingerprint, label,
    why a job did or did not open, and the page's address."""
    if kind == "ci_ingest":
        record = next((e for e in reversed(stages) if e.stage == "record" and e.output), None)
        rows = (record.output or {}).get("signatures", []) if record else []
    elif kind == "ci_failure" and params.get("fingerprint"):
        rows = [{"fingerprint": params["fingerprint"], "classification": params.get("classification") or {},
                 "decision": params.get("why", "")}]
    else:
        rows = []
    shown = []
    for row in rows:
        fingerprint = str(row.get("fingerprint") or "")
        if not fingerprint:
            continue
        classification = row.get("classification") or {}
        shown.append({"short": fingerprint[:12], "url": signature_url(repo, fingerprint),
                      "label": classification.get("label") or ("flaky" if row.get("passed_on_rerun") else ""),
                      "evidence": classification.get("evidence") or [], "decision": row.get("decision", "")})
    return shown


@router.get("/signatures/{owner}/{name}/{fingerprint}", response_class=HTMLResponse, include_in_schema=False)
def signature_page(request: Request, owner: Name, name: Name, fingerprint: Fingerprint, session: SessionDep,
                   services: ServicesDep, viewer: ViewerDep) -> Any:
    repo = f"{owner}/{name}"
    try:
        found = readable_view(session, services, viewer, repo, fingerprint)
    except HTTPException as exc:
        if exc.status_code == 401:
            return unreadable(request, viewer, f"signature {fingerprint}")
        raise
    if found is None:
        return unreadable(request, viewer, f"signature {fingerprint}")
    return page(request, "signature.html", {"s": found, "repo": repo}, viewer)


@router.get("/flaky", response_class=HTMLResponse, include_in_schema=False)
def flaky_page(request: Request, session: SessionDep, services: ServicesDep, viewer: ViewerDep) -> Any:
    try:
        rows = readable_flaky(session, services, viewer)
    except HTTPException as exc:
        if exc.status_code == 401:
            return unreadable(request, viewer, "flaky tests")
        raise
    return page(request, "flaky.html", {"rows": rows, "url": signature_url}, viewer)
