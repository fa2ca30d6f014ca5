"""`GET /healthz`: the database, the broker, and (when `scrub serve` checked it) the sandbox.

- both answer: 200 `ok`;
- the broker does not: 200 `degraded` (webhooks are still recorded; their runs fail with
  "could not enqueue" until it is back, and `/scrub retry` starts them again);
- the sandbox cannot start (no bubblewrap, no user namespaces): 200 `degraded` (runs wait:
  no worker of this host takes them);
- the database does not: 503 `error` (nothing can be recorded).
"""

from __future__ import annotations

import logging

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from app.api.deps import ServicesDep
from workers import broker_probe

log = logging.getLogger(__name__)
router = APIRouter()


@router.get("/healthz")
def healthz(services: ServicesDep) -> JSONResponse:
    report: dict[str, object] = {"webhooks": bool(services.settings.webhook_secret)}
    try:
        with services.database.session() as session:
            session.exec(text("SELECT 1"))  # type: ignore[call-overload]
        report["database"] = "ok"
    except SQLAlchemyError as exc:
        report["database"] = f"unavailable: {type(exc).__name__}"
    try:
        report["broker"] = f"ok ({broker_probe.check(services.settings)})"
    except broker_probe.BrokerUnavailable as exc:
        log.warning("broker unavailable: %s", exc)
        report["broker"] = f"unavailable: {str(exc)[:200]}"
    if services.sandbox is not None:
        report["sandbox"] = services.sandbox
    if report["database"] != "ok":
        return JSONResponse({"status": "error", **report}, status_code=503)
    healthy = str(report["broker"]).startswith("ok") and report.get("sandbox", "ok") == "ok"
    status = "ok" if healthy else "degraded"
    return JSONResponse({"status": status, **report})
