"""Errors a person sees: an HTML page for a browser, JSON for the API and scripts."""

from __future__ import annotations


def test_a_browser_asking_for_an_unknown_run_gets_an_html_page_and_the_api_keeps_json(client):
    html = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    response = client.get("/runs/999", headers=html)
    assert response.status_code == 404 and response.headers["content-type"].startswith("text/html")
    assert "run 999 not found" in response.text and '<a href="/">' in response.text
    assert "default-src 'none'" in response.headers["content-security-policy"]
    bad = client.get("/runs/not-a-number", headers=html)
    assert bad.status_code == 422 and bad.headers["content-type"].startswith("text/html")
    api = client.get("/api/v1/runs/999", headers=html)  # the API answers JSON, whoever asks
    assert api.status_code == 404 and api.json()["detail"] == "run 999 not found"
    assert client.get("/runs/999").headers["content-type"].startswith("application/json")  # no Accept: a script
