"""`/login`, `/auth/callback`, `/logout` details: where a sign-in may send the browser back to."""

from __future__ import annotations

from app.api.login import local_path


def test_only_paths_on_this_site_are_followed():
    assert local_path("/runs/7") == "/runs/7"
    for hostile in ("//evil.example", "https://evil.example/", "/\\evil.example", "", None, "runs"):
        assert local_path(hostile) == "/"


def test_in_local_mode_the_printed_token_signs_the_browser_in(client):
    token = client.app.state.services.people.local_token
    client.headers.pop("Authorization")  # a browser: no bearer token, only what the URL carries
    asked = client.get("/login?next=/runs/3", follow_redirects=False)
    assert asked.status_code == 200 and 'name="token"' in asked.text and "set-cookie" not in asked.headers
    wrong = client.get("/login?token=not-it&next=/runs/3", follow_redirects=False)
    assert wrong.status_code == 403 and "set-cookie" not in wrong.headers
    right = client.get(f"/login?token={token}&next=/runs/3", follow_redirects=False)
    assert right.status_code == 303 and right.headers["location"] == "/runs/3"
    assert "HttpOnly" in right.headers["set-cookie"] and token not in right.headers["set-cookie"]
    assert "signed in with the token" in client.get("/").text
    assert client.get("/auth/callback?code=x&state=y", follow_redirects=False).headers["location"] == "/"


def test_a_session_of_another_token_is_not_signed_in(tmp_path):
    """A restart with a new token (none configured) signs every browser out, even when the
    cookie's signing secret stays the same (`SCRUB_SESSION_SECRET` set without OAuth)."""
    from fastapi.testclient import TestClient

    from app.api import create_app
    from app.settings import Settings
    from tests.foundation import migrated_database

    settings = Settings(data_dir=tmp_path / "data", session_secret="k" * 40)
    settings.ensure_data_dir()
    migrated_database(settings.resolved_database_url).dispose()
    before, after = create_app(settings, local_token="first-token"), create_app(settings, local_token="second-token")
    with TestClient(before, base_url="http://127.0.0.1:8000") as browser:
        browser.get("/login?token=first-token", follow_redirects=False)
        assert "signed in with the token" in browser.get("/").text
        cookie = browser.cookies["scrub_session"]
    with TestClient(after, base_url="http://127.0.0.1:8000", cookies={"scrub_session": cookie}) as browser:
        assert "signed in with the token" not in browser.get("/").text
        assert browser.post("/api/v1/runs/1/retry").status_code == 401
