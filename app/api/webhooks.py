"""`POST /webhooks/github`: verify, record by delivery id (and by the comment or workflow run it
is about: a replay under a new delivery id is a duplicate), route, enqueue; answer in milliseconds."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import logging
from dataclasses import asdict

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlmodel import Session
from structlog.contextvars import bind_contextvars

from app.api.deps import Services, ServicesDep
from app.api.limits import BadInput, parse_json, read_body
from app.command_seal import seal
from app.db import leases, queries
from app.db.run_list import title_of
from app.github.webhooks import (
    Decision,
    Ignore,
    RunCommand,
    StartRun,
    event_key,
    repo_of,
    route,
    verify_signature,
)
from app.redact import redactor_for

log = logging.getLogger(__name__)
router = APIRouter()


def _reply(status_code: int, status: str, **extra: object) -> JSONResponse:
    return JSONResponse({"status": status, **extra}, status_code=status_code)


@router.post("/webhooks/github")
async def github_webhook(request: Request, services: ServicesDep) -> JSONResponse:
    secret = services.settings.webhook_secret
    if not secret:
        return _reply(503, "refused", detail="webhooks are refused until SCRUB_WEBHOOK_SECRET is set")
    try:
        body = await read_body(request)  # bounded: 413 past 25 MB, declared or streamed
    except BadInput as exc:
        return _reply(exc.status, "refused", detail=exc.detail)
    if not verify_signature(secret, body, request.headers.get("X-Hub-Signature-256")):
        return _reply(401, "unauthorized", detail="missing or invalid X-Hub-Signature-256")
    event, delivery_id = request.headers.get("X-GitHub-Event"), request.headers.get("X-GitHub-Delivery")
    if not event or not delivery_id:
        return _reply(400, "bad_request", detail="X-GitHub-Event and X-GitHub-Delivery are required")
    try:
        payload = parse_json(body)  # nesting and integers bounded: storable, never a 500
    except BadInput as exc:
        return _reply(exc.status, "bad_request", detail=exc.detail)
    if not isinstance(payload, dict):
        return _reply(400, "bad_request", detail="body is not a JSON object")
    bind_contextvars(delivery_id=delivery_id[:100])  # this request's log lines (app.logs)
    loop = asyncio.get_running_loop()
    work = functools.partial(ingest, services, delivery_id[:100], event[:100], payload)
    # An executor thread does not inherit contextvars: run it in a copy of this context.
    return await loop.run_in_executor(services.ingest_executor, contextvars.copy_context().run, work)


def ingest(services: Services, delivery_id: str, event: str, payload: dict) -> JSONResponse:
    try:
        decision: Decision = route(event, payload, services.settings.trigger_label)
    except Exception:  # a payload shape nobody foresaw must not cost GitHub a 5xx
        log.exception("delivery %s (%s) could not be routed", delivery_id, event)
        decision = Ignore("unroutable payload")
    try:
        response = _record_and_enqueue(services, delivery_id, event, payload, decision)
        log.info("webhook %s: %s", event, _status_of(response),
                 extra={"gh_event": event, "action": payload.get("action"), "http_status": response.status_code})
        return response
    except SQLAlchemyError:
        log.exception("delivery %s not recorded", delivery_id)
        return _reply(503, "unavailable", detail="database unavailable; redeliver later")


def _status_of(response: JSONResponse) -> str:
    try:
        return str(json.loads(bytes(response.body)).get("status"))
    except ValueError:
        return ""


def _record_and_enqueue(
    services: Services, delivery_id: str, event: str, payload: dict, decision: Decision
) -> JSONResponse:
    recorded, run_id = _record(services, delivery_id, event, payload, decision)
    if recorded is None:
        return _reply(200, "duplicate")
    if isinstance(recorded, Ignore):
        return _reply(200, "pong" if recorded.reason == "pong" else "ignored", reason=recorded.reason)
    return _enqueue(services, delivery_id, recorded, run_id)


def _record(
    services: Services, delivery_id: str, event: str, payload: dict, decision: Decision
) -> tuple[Decision | None, int | None]:
    """Store the delivery (and the run it starts) in one transaction; None when seen before."""
    action = payload.get("action") if isinstance(payload.get("action"), str) else None
    delivery = (delivery_id, event, action, repo_of(payload)[:200] or None)
    key = event_key(event, payload)  # a replay under a new delivery id is a duplicate too
    if not isinstance(decision, StartRun):  # most deliveries: one INSERT, no ORM
        with services.database.engine.begin() as connection:
            fresh = queries.record_delivery(connection, *delivery, outcome_of(decision, None), key)
        return (decision if fresh else None), None
    with services.database.session() as session:
        if not queries.record_delivery(session.connection(), *delivery, "received", key):
            return None, None
        run_id, decision = start_or_attach(session, decision, title=title_of(payload))
        queries.set_delivery_outcome(session, delivery_id, outcome_of(decision, run_id), run_id)
        session.commit()
        return decision, run_id


def start_or_attach(session: Session, decision: StartRun, title: str | None = None) -> tuple[int | None, Decision]:
    """Create the run, unless the issue has an active one: then attach to it (no second run,
    no second comment), or start that one over if its worker died (its lease expired).

    Two deliveries racing past the read both try to insert; the partial unique index lets one
    win and the other gets `IntegrityError` (in a savepoint: the delivery row stays) and attaches.
    """
    active = queries.active_issue_run(session, decision.repo, decision.issue) if decision.issue else None
    if active is None:
        try:
            with session.begin_nested():
                return queries.create_run(session, **asdict(decision), title=title).id, decision
        except IntegrityError:
            active = queries.active_issue_run(session, decision.repo, decision.issue) if decision.issue else None
            if active is None:
                raise
    if leases.is_stranded(active):
        leases.restart(session, active)
        return active.id, decision
    return None, Ignore(f"run {active.id} is already {active.status} for this issue")


def outcome_of(decision: Decision, run_id: int | None) -> str:
    if isinstance(decision, Ignore):
        return "pong" if decision.reason == "pong" else f"ignored: {decision.reason}"
    if isinstance(decision, RunCommand):
        return f"/scrub {decision.command} queued"
    return f"{decision.kind} run {run_id} queued"


def _enqueue(services: Services, delivery_id: str, decision: Decision, run_id: int | None) -> JSONResponse:
    try:
        if isinstance(decision, RunCommand):
            command = asdict(decision)
            services.enqueuer.handle_comment(**command, seal=seal(services.settings.webhook_secret, command))
            return _reply(202, "queued", command=decision.command)
        assert run_id is not None
        services.enqueuer.run_pipeline(run_id)
        return _reply(202, "queued", run_id=run_id)
    except Exception as exc:  # broker down: keep the record, make the failure visible
        log.exception("delivery %s recorded but not enqueued", delivery_id)
        error = redactor_for(services.settings).text(f"could not enqueue: {type(exc).__name__}: {exc}")[:300]
        with services.database.session() as session:
            queries.set_delivery_outcome(session, delivery_id, error, run_id)
            if run_id is not None:
                queries.fail_run(session, run_id, error)
            session.commit()
        return _reply(202, "not_queued", run_id=run_id, detail=error)
