"""What routes get injected: the settings, the database and the enqueuer of this app."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Annotated, Iterator

from fastapi import Depends, Request
from sqlmodel import Session

from app.db.session import Database
from app.settings import Settings
from workers.enqueue import Enqueuer


@dataclass
class Services:
    settings: Settings
    database: Database
    enqueuer: Enqueuer
    # Webhook bookkeeping runs here, off the event loop. SQLite takes one writer at a time, so
    # one thread (a FIFO queue, no lock convoy); a server database takes several.
    ingest_executor: ThreadPoolExecutor = field(init=False)

    def __post_init__(self) -> None:
        writers = 1 if self.database.engine.dialect.name == "sqlite" else 8
        self.ingest_executor = ThreadPoolExecutor(writers, thread_name_prefix="ingest")


def get_services(request: Request) -> Services:
    return request.app.state.services


def get_session(services: Annotated[Services, Depends(get_services)]) -> Iterator[Session]:
    with services.database.session() as session:
        yield session


ServicesDep = Annotated[Services, Depends(get_services)]
SessionDep = Annotated[Session, Depends(get_session)]
