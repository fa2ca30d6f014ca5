"""Live updates over server-sent events (sse-starlette).

- `/runs/{id}/events`: `update` events carrying the run page's live part (`_live.html`: header,
  buttons, stage timeline, log tail) whenever the run, a stage or the log changes, and at
  least every `RUNNING_TICK_S` while a stage runs (its duration so far); `finished` once the
  run has ended, then the stream closes. The page swaps the fragment in (static/live.js).
- `/events/runs`: `changed` when a run the viewer may read is created or changes, for the run
  list to reload.

The stream reads the database (`POLL_S`): workers on other machines write there, so it is the
one place every change shows up. The HTML sent is the same autoescaped templates as the page.
"""

from __future__ import annotations

import time
from typing import Any, AsyncIterator

import anyio
from fastapi import APIRouter, HTTPException, Request
from sqlalchemy import func
from sqlmodel import select
from sse_starlette.sse import EventSourceResponse

from app.api.limits import RunId
from app.api.deps import ServicesDep, ViewerDep
from app.db import queries, run_list
from app.db.models import FINISHED, Run, RunLogLine
from app.web.run_page import render_live

POLL_S = 0.5
RUNNING_TICK_S = 2.0
PING_S = 15
router = APIRouter()


def run_version(detail: queries.RunDetail, last_log_line: int | None) -> tuple[Any, ...]:
    return (
        detail.run.status, detail.run.updated_at, detail.run.verdict,
        tuple((e.id, e.status, e.ended_at, e.summary) for e in detail.stages),
        last_log_line,
    )


def last_log_line(session: Any, run_id: RunId) -> int | None:
    return session.exec(select(func.max(RunLogLine.id)).where(RunLogLine.run_id == run_id)).one()


async def run_stream(request: Request, services: Any, run_id: RunId, viewer: Any = None) -> AsyncIterator[dict[str, str]]:
    last: tuple[Any, ...] | None = None
    last_sent = 0.0

    def snapshot() -> tuple[tuple[Any, ...], str, bool, bool] | None:
        with services.database.session() as session:
            detail = queries.run_detail(session, run_id)
            if detail is None:
                return None
            running = any(e.ended_at is None for e in detail.stages)
            return run_version(detail, last_log_line(session, run_id)), render_live(request, detail, viewer), detail.run.status in FINISHED, running

    while not await request.is_disconnected():
        taken = await anyio.to_thread.run_sync(snapshot)
        if taken is None:
            yield {"event": "gone", "data": f"run {run_id} was deleted"}
            return
        version, html, finished, running = taken
        ticking = running and time.monotonic() - last_sent >= RUNNING_TICK_S
        if version != last or ticking:
            yield {"event": "update", "data": html}
            last, last_sent = version, time.monotonic()
        if finished:
            yield {"event": "finished", "data": "finished"}
            return
        await anyio.sleep(POLL_S)


@router.get("/runs/{run_id}/events", include_in_schema=False)
async def run_events(request: Request, run_id: RunId, services: ServicesDep, viewer: ViewerDep) -> EventSourceResponse:
    def readable() -> bool:
        with services.database.session() as session:
            run = session.get(Run, run_id)
            return run is not None and services.people.can_read(viewer, run)

    if not await anyio.to_thread.run_sync(readable):  # a private run is "not found" to whoever may not read it
        raise HTTPException(404, f"run {run_id} not found")
    return EventSourceResponse(run_stream(request, services, run_id, viewer), ping=PING_S)


def runs_version(services: Any, viewer: Any = None) -> tuple[Any, ...]:
    """What changes when a run the viewer may read changes: the count, last change and active
    count of the runs of the repositories they may read (`People.can_read`, asked of each
    repository's newest run). An operator reads every run; for anyone else, activity of a private
    repository's runs never shows."""
    with services.database.session() as session:
        newest = run_list.newest_run_per_repo(session)
        if viewer is None or viewer.trusted:
            return run_list.activity(session, list(newest), without_repo=True)
        people = services.people
        readable = [repo for repo, run_id in newest.items() if people.can_read_or_not(viewer, session.get(Run, run_id))]
        return run_list.activity(session, readable, without_repo=services.settings.public_read or viewer.signed_in)


async def runs_stream(request: Request, services: Any, viewer: Any = None) -> AsyncIterator[dict[str, str]]:
    first = await anyio.to_thread.run_sync(runs_version, services, viewer)
    while not await request.is_disconnected():
        await anyio.sleep(POLL_S)
        now = await anyio.to_thread.run_sync(runs_version, services, viewer)
        if now != first:
            yield {"event": "changed", "data": "changed"}
            first = now


@router.get("/events/runs", include_in_schema=False)
async def runs_events(request: Request, services: ServicesDep, viewer: ViewerDep) -> EventSourceResponse:
    if not viewer.signed_in and not services.settings.public_read:
        raise HTTPException(401, "sign in to follow the runs")
    return EventSourceResponse(runs_stream(request, services, viewer), ping=PING_S)
