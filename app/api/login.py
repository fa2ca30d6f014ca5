"""`/login`, `/auth/callback`, `/logout`: signing in to the status page with GitHub.

`/login?next=/runs/7` remembers where to go back and a random `state` in the session, and
sends the browser to GitHub; `/auth/callback` checks the state, trades the code for the
person's login (`app.github.oauth`), starts a fresh session (new CSRF token) and goes back.
`POST /logout` (CSRF-checked) ends the session. In local mode `/login?token=<the token scrub
serve printed>` signs the browser in instead (`app.api.access`).
"""

from __future__ import annotations

import hmac
import secrets
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import PlainTextResponse, RedirectResponse, Response

from app.api import csrf
from app.api.access import LOCAL_SESSION_KEY
from app.api.deps import ServicesDep
from app.github.oauth import OAuthApp, OAuthError
from app.web.templating import page

router = APIRouter(include_in_schema=False)


def local_path(value: str | None) -> str:
    """A path on this site to go back to; anything else (`//evil`, `https://...`) becomes `/`."""
    if value and value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value
    return "/"


def callback_url(request: Request, services: ServicesDep) -> str:
    public = services.settings.public_url.rstrip("/")
    return f"{public}/auth/callback" if public else str(request.url_for("oauth_callback"))


def oauth_app(services: ServicesDep) -> OAuthApp:
    s = services.settings
    return OAuthApp(s.oauth_client_id, s.oauth_client_secret, s.resolved_github_web_url, s.github_api_url)


@router.get("/login")
def login(request: Request, services: ServicesDep, next: str | None = None, token: str = "") -> Response:
    if services.people.local:
        return local_login(request, services, local_path(next), token)
    state = secrets.token_urlsafe(24)
    request.session["oauth_state"], request.session["next"] = state, local_path(next)
    return RedirectResponse(oauth_app(services).authorize_url(callback_url(request, services), state), status_code=303)


def local_login(request: Request, services: ServicesDep, back: str, token: str) -> Response:
    """Local mode: the token `scrub serve` printed signs this browser in (a fresh session, a
    new CSRF token); without it, a page that asks for it; a wrong one is refused (403)."""
    people = services.people
    if token and people.local_token_ok(token):
        request.session.clear()
        request.session[LOCAL_SESSION_KEY] = people.local_session_mark
        csrf.csrf_token(request)
        return RedirectResponse(back, status_code=303)
    return page(request, "local_login.html", {"next": back, "wrong": bool(token)}, people.viewer(request),
                status_code=403 if token else 200)


@router.get("/auth/callback", name="oauth_callback")
async def callback(request: Request, services: ServicesDep, code: str = "", state: str = "") -> Response:
    if services.people.local:
        return RedirectResponse("/", status_code=303)
    expected = request.session.pop("oauth_state", None)
    if not code or not isinstance(expected, str) or not hmac.compare_digest(state.encode(), expected.encode()):
        return PlainTextResponse("Sign-in expired or was not started here. Go back and sign in again.", 400)
    app, redirect = oauth_app(services), callback_url(request, services)
    try:
        token = await run_in_threadpool(app.exchange_code, code, redirect)
        user = await run_in_threadpool(app.user_login, token)
    except OAuthError as exc:
        return PlainTextResponse(f"Sign-in failed: {exc}", 502)
    back = local_path(request.session.get("next"))
    request.session.clear()  # a fresh session: nothing of the anonymous one carries over
    request.session["user"] = user
    csrf.csrf_token(request)
    return RedirectResponse(back, status_code=303)


async def _csrf_checked(request: Request, services: ServicesDep) -> None:
    await csrf.check(request, services.settings)


@router.post("/logout")
def logout(request: Request, _: Annotated[None, Depends(_csrf_checked)]) -> Response:
    request.session.clear()
    return RedirectResponse("/", status_code=303)
