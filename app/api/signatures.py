"""`/api/v1/signatures/{owner}/{name}/{fingerprint}`: one failure signature's history (first and
last seen, runs, branches, rates, classifications, linked issues and PRs, occurrences);
`/api/v1/flaky`: the flaky tests, the most often failing first, with their measured rates.

A signature is read like a run of its repository (`app.api.access`): a private repository's
signatures only by people who may read it. `fingerprint`: the whole hex fingerprint or a
unique prefix of at least 8 digits (a `scrub/<12 digits>` branch names one)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException
from fastapi import Path as PathParam

from app.api.access import People, Viewer
from app.api.deps import ServicesDep, SessionDep, ViewerDep
from app.db import signature_pages
from app.db.models import Run

router = APIRouter(prefix="/api/v1")
Name = Annotated[str, PathParam(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.-]+$")]
Fingerprint = Annotated[str, PathParam(min_length=signature_pages.MIN_PREFIX, max_length=64, pattern=r"^[0-9a-fA-F]+$")]


def may_read(people: People, viewer: Viewer, repo: str, installation_id: int | None) -> bool:
    """As for a run of `repo` (a repository whose visibility is unknown counts as private)."""
    return people.can_read(viewer, Run(repo=repo, installation_id=installation_id))


def readable_view(session: Any, services: Any, viewer: Viewer, repo: str,
                  fingerprint: str) -> signature_pages.SignatureView | None:
    """The signature's view, None when there is none or the viewer may not read its repository:
    as for a run, a private signature is the same 404 as a missing one (anonymous, when nothing
    is public: the same 401 for both)."""
    if not viewer.signed_in and not services.settings.public_read:
        raise HTTPException(401, "sign in to see signatures", headers={"WWW-Authenticate": "Bearer"})
    signature = signature_pages.find_signature(session, repo, fingerprint)
    if signature is None:
        return None
    found = signature_pages.view(session, signature)
    if not may_read(services.people, viewer, repo, found.installation_id):
        return None
    return found


def readable_flaky(session: Any, services: Any, viewer: Viewer) -> list[signature_pages.SignatureView]:
    if not viewer.signed_in and not services.settings.public_read:
        raise HTTPException(401, "sign in to see flaky tests", headers={"WWW-Authenticate": "Bearer"})
    readable: dict[str, bool] = {}
    shown = []
    for found in signature_pages.flaky(session):
        repo = found.signature.repo
        if repo not in readable:
            readable[repo] = may_read(services.people, viewer, repo, found.installation_id)
        if readable[repo]:
            shown.append(found)
    return shown


@router.get("/signatures/{owner}/{name}/{fingerprint}")
def get_signature(owner: Name, name: Name, fingerprint: Fingerprint, session: SessionDep, services: ServicesDep,
                  viewer: ViewerDep) -> dict[str, Any]:
    found = readable_view(session, services, viewer, f"{owner}/{name}", fingerprint)
    if found is None:
        raise HTTPException(404, f"no signature {fingerprint} in {owner}/{name}")
    return found.to_json()


@router.get("/flaky")
def list_flaky(session: SessionDep, services: ServicesDep, viewer: ViewerDep) -> list[dict[str, Any]]:
    rows = []
    for found in readable_flaky(session, services, viewer):
        data = found.to_json()
        data.pop("occurrences")
        rows.append(data)
    return rows
