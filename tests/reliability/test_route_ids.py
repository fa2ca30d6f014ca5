"""Every route that takes a run id answers 422 (not an id a run can have) or 404 (not there),
never a 500, on SQLite and on Postgres (#21, finding 9: `POST /api/v1/runs/{2**70}/reject` once
answered 500 while its siblings answered 422; on Postgres every id route answered 500 for ids
between 2**31 and 2**63, `run.id` being a 32-bit INTEGER there). The routes are read from the
app itself, so a route added later with a bare `int` is caught too."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.settings import Settings
from tests.foundation import migrated_database
from workers.enqueue import RecordingEnqueuer

VALUES = (2**70, 2**64, 2**63, 2**63 - 1, 2**40, 2**31, -1, 0, "1e3", "x", "%00")
OTHER = {"name": "log", "which": "original"}  # the other path parameters, for a run that does not exist


def id_routes(routes) -> list[tuple[str, str]]:
    """(method, path) of every route with a run id, through included routers (none of ours
    adds a prefix when included: a router's own prefix is in its routes' paths)."""
    found = []
    for route in routes:
        included = getattr(route, "original_router", None) or getattr(route, "router", None)
        if included is not None and hasattr(included, "routes"):
            found += id_routes(included.routes)
        elif "{run_id}" in getattr(route, "path", "") and getattr(route, "methods", None):
            found += [(method, route.path) for method in sorted(set(route.methods) - {"HEAD"})]
    return found


def check(settings: Settings) -> None:
    from app.api import create_app

    app = create_app(settings, enqueuer=RecordingEnqueuer(), local_token="operator")
    routes = id_routes(app.routes)
    assert len(routes) >= 9, routes  # the run, its page, events, artifacts, repros and four actions
    bad = {}
    with TestClient(app, base_url="http://127.0.0.1:8000", headers={"Authorization": "Bearer operator"},
                    raise_server_exceptions=False) as client:
        for method, path in routes:
            for value in VALUES:
                url = path.replace("{run_id}", str(value)).format(**OTHER)
                answer = client.request(method, url, data={"reason": "r"} if method == "POST" else None)
                if answer.status_code not in (404, 422):
                    bad[f"{method} {url}"] = answer.status_code
        for value in VALUES:  # the run list's cursor: a problem shown on the page, never a 500
            answer = client.get(f"/?before={value}")
            if answer.status_code != 200:
                bad[f"GET /?before={value}"] = answer.status_code
    assert bad == {}


def test_every_id_route_on_sqlite(tmp_path):
    settings = Settings(data_dir=tmp_path / "data")
    settings.ensure_data_dir()
    migrated_database(settings.resolved_database_url).dispose()
    check(settings)


@pytest.mark.services
def test_every_id_route_on_postgres(tmp_path, postgres_url):
    migrated_database(postgres_url).dispose()
    check(Settings(data_dir=tmp_path / "data", database_url=postgres_url))
