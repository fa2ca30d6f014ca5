"""The HTTP service: webhooks, the JSON API, the status page. Built by `create_app(settings)`."""

from __future__ import annotations

from contextlib import asynccontextmanager
from functools import partial
from typing import AsyncIterator

from fastapi import FastAPI

from app.api.deps import Services
from app.db.session import database_for
from app.github.connect import github_client
from app.settings import Settings
from workers.enqueue import Enqueuer


def create_app(settings: Settings, *, enqueuer: Enqueuer | None = None, sandbox: str | None = None,
               local_token: str | None = None, bound_host: str | None = None) -> FastAPI:
    """`enqueuer` defaults to Celery on the configured broker; tests pass a recording one.
    `sandbox`: what the shell found of this host's sandbox (`ok`, `unavailable: <why>`), for
    `/healthz` (the HTTP side never runs the engine's probe itself). `local_token`: local
    mode's secret (`scrub serve` prints it; default `SCRUB_LOCAL_TOKEN`, else random: see
    `app.state.services.people.local_token`). `bound_host`: the address `scrub serve --host`
    listens on, a name this server answers to (`app.api.hosts`)."""
    from app.api import health, login, metrics, runs, signatures, tracked, webhooks
    from app.api.access import People
    from app.api.hosts import TrustedHosts, trusted_names
    from app.api.limits import BodyLimit
    from app.api.sessions import SessionMiddleware
    from app.web import api_docs, errors, pages

    if enqueuer is None:
        from workers.celery_app import create_celery
        from workers.enqueue import CeleryEnqueuer

        enqueuer = CeleryEnqueuer(create_celery(settings))
    settings.ensure_data_dir()
    people = People(settings, partial(github_client, settings) if settings.github_configured else None,
                    local_token=local_token)
    services = Services(settings, database_for(settings.resolved_database_url), enqueuer, people, sandbox=sandbox)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        services.ingest_executor.shutdown(wait=True)

    # With people signing in, nothing but the webhook, health (and metrics) is open: no schema pages.
    # The API docs are our own page (`app.web.api_docs`): FastAPI's load their assets from a CDN.
    closed = {"openapi_url": None} if settings.oauth_configured else {}
    app = FastAPI(title="Scrubbot", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None, **closed)
    app.state.services = services
    for router in (health.router, metrics.router, webhooks.router, login.router, runs.router, signatures.router, tracked.router,
                   pages.router):
        app.include_router(router)
    if not settings.oauth_configured:
        app.include_router(api_docs.router)
    app.add_middleware(
        SessionMiddleware, secret=settings.session_secret, always_secure=settings.public_url.startswith("https://")
    )
    app.add_middleware(BodyLimit)  # every body bounded as it streams in (`app.api.limits`)
    app.add_middleware(TrustedHosts, names=trusted_names(settings, bound_host))  # outermost: DNS rebinding
    app.mount("/static", pages.static_files, name="static")
    errors.install(app)  # a browser gets an HTML error page; the API keeps JSON
    return app
