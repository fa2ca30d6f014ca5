"""Cross-site request forgery: a state-changing request must come from this site.

Two checks, both on every POST that is not authenticated by a bearer token:

- `Origin` (or, without it, `Referer`) must be this site: the origin of `SCRUB_PUBLIC_URL`, or,
  when it is unset, the request's own origin provided its host is a loopback name (so a DNS
  rebinding page cannot pass as this site). Browsers send `Origin` with every cross-origin POST.
- a browser request (one with `Origin`, `Referer` or our session cookie) must carry the
  session's CSRF token: the form field `csrf_token` (templates render it with `csrf_field()`)
  or the header `X-CSRF-Token`. The token lives in the signed, HttpOnly session cookie, so
  another site can neither read nor guess it.

A request with none of these is a script: it passes here, and authentication decides (only
local mode lets an unauthenticated script act).
"""

from __future__ import annotations

import hmac
import secrets
from urllib.parse import parse_qs, urlsplit

from fastapi import HTTPException, Request
from jinja2 import pass_context
from markupsafe import Markup, escape

from app.api.sessions import COOKIE
from app.settings import Settings

FIELD = "csrf_token"
HEADER = "x-csrf-token"
SESSION_KEY = "csrf"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


def csrf_token(request: Request) -> str:
    """This session's token (created on first use; the session middleware stores it)."""
    session = request.scope.setdefault("session", {})
    token = session.get(SESSION_KEY)
    if not isinstance(token, str) or len(token) < 32:
        token = session[SESSION_KEY] = secrets.token_urlsafe(32)
    return token


@pass_context
def csrf_field(context: dict) -> Markup:
    """Jinja global: `{{ csrf_field() }}` inside a `<form method="post">`."""
    token = csrf_token(context["request"])
    return Markup(f'<input type="hidden" name="{FIELD}" value="{escape(token)}">')


def _origin(url: str) -> str | None:
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return None
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def site_origin(request: Request, settings: Settings) -> str | None:
    """The one origin allowed to post here; None when there is none we can trust."""
    if settings.public_url:
        return _origin(settings.public_url)
    if (request.url.hostname or "").lower() in LOOPBACK_HOSTS:
        return _origin(str(request.base_url))
    return None


async def check(request: Request, settings: Settings) -> None:
    """Raise 403 unless the request may change state as far as CSRF goes (see module doc)."""
    claimed = request.headers.get("origin") or request.headers.get("referer")
    if claimed is not None:
        allowed = site_origin(request, settings)
        if allowed is None or _origin(claimed) != allowed:
            raise HTTPException(403, "cross-origin request refused")
    browser = claimed is not None or COOKIE in request.cookies
    if not browser:
        return
    sent = request.headers.get(HEADER) or await _form_token(request)
    expected = request.scope.get("session", {}).get(SESSION_KEY)
    if not sent or not isinstance(expected, str) or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise HTTPException(403, "missing or invalid CSRF token; reload the page and try again")


async def _form_token(request: Request) -> str | None:
    if not request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        return None
    body = await request.body()
    if len(body) > 64 * 1024:
        return None
    values = parse_qs(body.decode("latin-1"), max_num_fields=20).get(FIELD)
    return values[0] if values else None
