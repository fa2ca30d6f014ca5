"""`/`: the runs, newest first, with filters (repo, kind, status, verdict), a text search and
cursor pagination (`?before=<run id>`). It updates itself while a run is active (`app.web.sse`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.api.deps import ServicesDep, SessionDep, ViewerDep
from app.api.limits import RUN_ID_MAX
from app.db import run_list
from app.db.models import FINISHED
from app.web.templating import page, unreadable

PAGE_SIZE = 50
router = APIRouter()


def parse_filters(params: Any) -> tuple[run_list.RunFilter, int | None, list[str]]:
    """The filters, cursor and any problems with them from a query string (bad input is
    reported on the page, never a traceback)."""
    problems: list[str] = []
    values = {name: str(params.get(name) or "").strip()[:300] for name in ("repo", "kind", "status", "verdict", "q")}
    before_text = str(params.get("before") or "").strip()
    before = None
    if before_text:
        if before_text.isdigit() and 0 < int(before_text) <= RUN_ID_MAX:
            before = int(before_text)
        else:
            problems.append(f"'before' must be a run number, not {before_text[:40]!r}: showing the newest runs")
    return run_list.RunFilter(**values), before, problems


def page_url(filters: run_list.RunFilter, before: int | None = None) -> str:
    query = {**filters.active(), **({"before": str(before)} if before else {})}
    return "/?" + urlencode(query) if query else "/"


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
def runs_page(request: Request, session: SessionDep, services: ServicesDep, viewer: ViewerDep) -> Any:
    if not viewer.signed_in and not services.settings.public_read:
        return unreadable(request, viewer, "runs")
    filters, before, problems = parse_filters(request.query_params)
    found = run_list.list_runs(session, filters, before, PAGE_SIZE)
    # Runs of private repositories the viewer may not read are left out (a page may then hold
    # fewer than PAGE_SIZE rows; the cursor still moves on from the last run read).
    runs = [run for run in found.runs if services.people.can_read(viewer, run)]
    active = any(run.status not in FINISHED for run in runs)
    return page(request, "runs.html", {
        "runs": runs,
        "pull_requests": found.pull_requests,
        "filters": filters,
        "choices": run_list.choices(session, None if viewer.trusted else lambda run: services.people.can_read_or_not(viewer, run)),
        "problems": problems,
        "newer_url": page_url(filters) if before else None,
        "older_url": page_url(filters, found.next_before) if found.next_before else None,
        "events": "/events/runs" if active and before is None else None,
    }, viewer)
