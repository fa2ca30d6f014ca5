"""What routes get injected: the settings, the database and the enqueuer of this app."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Annotated, Iterator

from fastapi import Depends, HTTPException, Request
from sqlmodel import Session

from app.api import csrf
from app.api.access import People, Viewer
from app.db.session import Database
from app.settings import Settings
from workers.enqueue import Enqueuer


@dataclass
class Services:
    settings: Settings
    database: Database
    enqueuer: Enqueuer
    people: People = field(default=None)  # type: ignore[assignment]  # built from settings when None
    sandbox: str | None = None  # `ok` / `unavailable: <why>`, as `scrub serve` found it; None: not checked
    # Webhook bookkeeping runs here, off the event loop. SQLite takes one writer at a time, so
    # one thread (a FIFO queue, no lock convoy); a server database takes several.
    ingest_executor: ThreadPoolExecutor = field(init=False)

    def __post_init__(self) -> None:
        if self.people is None:
            self.people = People(self.settings)
        writers = 1 if self.database.engine.dialect.name == "sqlite" else 8
        self.ingest_executor = ThreadPoolExecutor(writers, thread_name_prefix="ingest")


def get_services(request: Request) -> Services:
    return request.app.state.services


def get_session(services: Annotated[Services, Depends(get_services)]) -> Iterator[Session]:
    with services.database.session() as session:
        yield session


ServicesDep = Annotated[Services, Depends(get_services)]
SessionDep = Annotated[Session, Depends(get_session)]


def get_viewer(request: Request, services: Annotated[Services, Depends(get_services)]) -> Viewer:
    """Who asks (bearer token, session or local user); 401 for a wrong token."""
    return services.people.viewer(request)


async def get_actor(request: Request, services: Annotated[Services, Depends(get_services)]) -> Viewer:
    """Who asks to change something: signed in (401), and CSRF-checked unless by bearer token (403)."""
    viewer = services.people.viewer(request)
    if not viewer.signed_in:
        raise HTTPException(401, "sign in to do this", headers={"WWW-Authenticate": "Bearer"})
    if viewer.via != "token":
        await csrf.check(request, services.settings)
    return viewer


ViewerDep = Annotated[Viewer, Depends(get_viewer)]
ActorDep = Annotated[Viewer, Depends(get_actor)]
