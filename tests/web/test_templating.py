"""The status page's shared helpers: what a viewer sees in front of something they may not read."""

from __future__ import annotations

import pytest
from fastapi import HTTPException, Request
from fastapi.responses import RedirectResponse

from app.api.access import ANONYMOUS, Viewer
from app.web.templating import unreadable


def _request(path: str) -> Request:
    return Request({"type": "http", "method": "GET", "path": path, "query_string": b"", "headers": []})


def test_an_anonymous_viewer_is_sent_to_sign_in_and_back():
    answer = unreadable(_request("/runs/7"), ANONYMOUS, "run 7")
    assert isinstance(answer, RedirectResponse)
    assert answer.status_code == 303 and answer.headers["location"] == "/login?next=/runs/7"


def test_a_signed_in_viewer_is_told_the_thing_does_not_exist():
    with pytest.raises(HTTPException) as refused:
        unreadable(_request("/runs/7"), Viewer("wanda", "session"), "run 7")
    assert refused.value.status_code == 404 and refused.value.detail == "run 7 not found"



def test_the_api_docs_page_loads_nothing_from_elsewhere(client):
    """FastAPI's Swagger page pulls its script and styles from a CDN: blocked offline and by the CSP."""
    import re

    response = client.get("/docs")
    assert response.status_code == 200 and "default-src 'none'" in response.headers["content-security-policy"]
    page = response.text
    assert "/api/v1/runs/{run_id}" in page and "GET" in page and 'href="/openapi.json"' in page
    sources = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert sources and all(url.startswith("/") or url.startswith("#") for url in sources), sources
    assert "cdn" not in page.lower() and client.get("/redoc").status_code == 404
