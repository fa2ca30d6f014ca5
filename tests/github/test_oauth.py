"""The OAuth web flow against the fake GitHub over HTTP: clear errors, never a traceback."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from app.github.oauth import OAuthApp, OAuthError


def code_for(fake, app: OAuthApp, login: str) -> str:
    fake.oauth_login = login
    back = httpx.get(app.authorize_url("http://127.0.0.1:1/auth/callback", "st4te"), follow_redirects=False)
    query = parse_qs(urlsplit(back.headers["location"]).query)
    assert query["state"] == ["st4te"]
    return query["code"][0]


def test_code_to_login(fake_github):
    fake_github.oauth_client_id, fake_github.oauth_client_secret = "cid", "sec"
    app = OAuthApp("cid", "sec", fake_github.url, fake_github.url)
    token = app.exchange_code(code_for(fake_github, app, "wanda"), "http://127.0.0.1:1/auth/callback")
    assert app.user_login(token) == "wanda"


def test_a_wrong_secret_or_a_used_code_is_a_clear_error(fake_github):
    fake_github.oauth_client_id, fake_github.oauth_client_secret = "cid", "sec"
    good, bad = OAuthApp("cid", "sec", fake_github.url, fake_github.url), OAuthApp("cid", "nope", fake_github.url, fake_github.url)
    code = code_for(fake_github, good, "wanda")
    with pytest.raises(OAuthError, match="client_id and/or client_secret"):
        bad.exchange_code(code, "http://x/cb")
    good.exchange_code(code, "http://x/cb")
    with pytest.raises(OAuthError, match="incorrect or expired"):
        good.exchange_code(code, "http://x/cb")  # one use


def test_github_unreachable_is_a_clear_error():
    app = OAuthApp("cid", "sec", "http://127.0.0.1:9", "http://127.0.0.1:9")
    with pytest.raises(OAuthError, match="did not answer"):
        app.exchange_code("c", "http://x/cb")
    with pytest.raises(OAuthError, match="did not say who"):
        app.user_login("t")
