"""`/login`, `/auth/callback`, `/logout` details: where a sign-in may send the browser back to."""

from __future__ import annotations

from app.api.login import local_path


def test_only_paths_on_this_site_are_followed():
    assert local_path("/runs/7") == "/runs/7"
    for hostile in ("//evil.example", "https://evil.example/", "/\\evil.example", "", None, "runs"):
        assert local_path(hostile) == "/"


def test_in_local_mode_there_is_nothing_to_sign_in_to(client):
    answer = client.get("/login?next=/runs/3", follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == "/runs/3"
    assert client.get("/auth/callback?code=x&state=y", follow_redirects=False).headers["location"] == "/"
