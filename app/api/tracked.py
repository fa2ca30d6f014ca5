"""`/api/v1/tracked`: the bugs progression re-checks (the status page's `/tracked`, as JSON)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fastapi import APIRouter, HTTPException

from app.api.deps import ServicesDep, SessionDep, ViewerDep
from app.db import progression

router = APIRouter(prefix="/api/v1")


@router.get("/tracked")
def list_tracked(session: SessionDep, services: ServicesDep, viewer: ViewerDep) -> list[dict[str, Any]]:
    """Each tracked issue or PR: its state, the run that found it, its latest re-check."""
    if not viewer.signed_in and not services.settings.public_read:
        raise HTTPException(401, "sign in to see tracked bugs", headers={"WWW-Authenticate": "Bearer"})
    bugs = [bug for bug in progression.tracked(session) if services.people.can_read(viewer, bug)]
    return [asdict(bug) | {"open": bug.open, "last_check_at": bug.last_check_at.isoformat() if bug.last_check_at
                           else None} for bug in bugs]
