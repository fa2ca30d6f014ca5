"""The HTTP service: webhooks, the JSON API, the status page. Built by `create_app(settings)`."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import AsyncIterator

from fastapi import FastAPI

from app.api.deps import Services
from app.db.session import database_for
from app.settings import Settings
from workers.enqueue import Enqueuer


def create_app(settings: Settings, *, enqueuer: Enqueuer | None = None) -> FastAPI:
    """`enqueuer` defaults to Celery on the configured broker; tests pass a recording one."""
    from app.api import health, metrics, runs, webhooks
    from app.web import pages

    if enqueuer is None:
        from workers.celery_app import create_celery
        from workers.enqueue import CeleryEnqueuer

        enqueuer = CeleryEnqueuer(create_celery(settings))
    settings.ensure_data_dir()
    services = Services(settings, database_for(settings.resolved_database_url), enqueuer)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        services.ingest_executor.shutdown(wait=True)

    app = FastAPI(title="Scrubbot", version="0.1.0", lifespan=lifespan)
    app.state.services = services
    for router in (health.router, metrics.router, webhooks.router, runs.router, pages.router):
        app.include_router(router)
    app.mount("/static", pages.static_files, name="static")
    return app
