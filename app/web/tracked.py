"""`/tracked`: the bugs progression re-checks, each with its state and its last check.

Open ones first (still reproducing, or passing with nothing to witness a fix), then the ones
it resolved (fixed, closed); newest finding first within each. The JSON is `/api/v1/tracked`.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.api.deps import ServicesDep, SessionDep, ViewerDep
from app.db import progression
from app.domain import TrackedBug
from app.web.templating import page, unreadable

router = APIRouter()


def readable(session: Any, services: Any, viewer: Any) -> list[TrackedBug]:
    """The tracked bugs this viewer may read, open ones first, newest finding first."""
    bugs = [bug for bug in progression.tracked(session) if services.people.can_read(viewer, bug)]
    return sorted(bugs, key=lambda bug: (not bug.open, -bug.source_run))


@router.get("/tracked", response_class=HTMLResponse, include_in_schema=False)
def tracked_page(request: Request, session: SessionDep, services: ServicesDep, viewer: ViewerDep) -> Any:
    if not viewer.signed_in and not services.settings.public_read:
        return unreadable(request, viewer, "tracked bugs")
    bugs = readable(session, services, viewer)
    return page(request, "tracked.html", {"bugs": bugs, "settings": services.settings}, viewer)
