"""`/docs`: the JSON API on a page of our own (FastAPI's pages load their assets from a CDN)."""

from __future__ import annotations

from app.web.api_docs import operations


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


def test_operations_list_parameters_and_answers():
    schema = {"paths": {"/api/v1/runs/{run_id}": {"get": {"summary": "Get Run", "parameters": [
        {"name": "run_id", "in": "path", "required": True, "schema": {"type": "integer"}}],
        "responses": {"200": {"description": "Successful Response"}, "422": {"description": "Validation Error"}}}}}}
    [op] = operations(schema)
    assert (op["method"], op["path"], op["summary"]) == ("GET", "/api/v1/runs/{run_id}", "Get Run")
    assert op["parameters"] == [{"name": "run_id", "in": "path", "required": True, "type": "integer"}]
    assert op["responses"] == [("200", "Successful Response"), ("422", "Validation Error")]
