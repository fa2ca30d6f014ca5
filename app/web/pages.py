"""The status page's routes, gathered: the run list (`app.web.run_list`), a run
(`app.web.run_page`, with `app.web.approval`), live updates (`app.web.sse`), static files."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles

from app.web import run_list, run_page, signatures, sse, tracked
from app.web.templating import HERE, SECURITY_HEADERS, templates

__all__ = ["SECURITY_HEADERS", "router", "static_files", "templates"]

router = APIRouter()
for module in (run_list, sse, run_page, signatures, tracked):
    router.include_router(module.router)


@router.get("/favicon.ico", include_in_schema=False)
def favicon() -> Response:
    """No icon, and no 404 in every browser's console."""
    return Response(status_code=204)


static_files = StaticFiles(directory=HERE / "static")  # mounted at /static by create_app
