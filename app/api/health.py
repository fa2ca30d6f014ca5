from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from app.api.deps import ServicesDep

router = APIRouter()


@router.get("/healthz")
def healthz(services: ServicesDep) -> JSONResponse:
    try:
        with services.database.session() as session:
            session.exec(text("SELECT 1"))  # type: ignore[call-overload]
    except SQLAlchemyError as exc:
        return JSONResponse({"status": "error", "database": type(exc).__name__}, status_code=503)
    return JSONResponse({"status": "ok", "webhooks": bool(services.settings.webhook_secret)})
