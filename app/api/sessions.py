"""A signed session cookie: a small JSON dict in `request.scope["session"]`.

The cookie is `base64(json).timestamp.hmac-sha256` under `SCRUB_SESSION_SECRET`: the browser can
read nothing useful from it and forge nothing. `HttpOnly`, `SameSite=Lax` (a form posted from
another site carries no cookie), and `Secure` whenever the request came over TLS (the public URL
is https, or a trusted proxy said `X-Forwarded-Proto: https`, which uvicorn applies). A session
older than `max_age` is dropped. Only a changed session is written back.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from http.cookies import SimpleCookie
from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "scrub_session"
MAX_AGE_S = 8 * 3600


def _sign(secret: bytes, payload: str) -> str:
    return hmac.new(secret, payload.encode(), hashlib.sha256).hexdigest()


def encode(secret: bytes, data: dict[str, Any], now: float | None = None) -> str:
    body = base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).decode().rstrip("=")
    payload = f"{body}.{int(now if now is not None else time.time())}"
    return f"{payload}.{_sign(secret, payload)}"


def decode(secret: bytes, value: str, max_age: float = MAX_AGE_S, now: float | None = None) -> dict[str, Any]:
    """The session in a cookie value; empty when it is forged, malformed or too old."""
    try:
        body, stamp, signature = value.split(".")
        if not hmac.compare_digest(signature, _sign(secret, f"{body}.{stamp}")):
            return {}
        if (now if now is not None else time.time()) - int(stamp) > max_age:
            return {}
        data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (ValueError, TypeError):
        return {}
    return data if isinstance(data, dict) else {}


class SessionMiddleware:
    """`secret`: the signing key (a random one per process when none is configured: sessions
    then last as long as the process, which is all local mode needs for CSRF tokens)."""

    def __init__(self, app: ASGIApp, secret: str, *, always_secure: bool = False, max_age: float = MAX_AGE_S) -> None:
        self.app = app
        self.secret = (secret or secrets.token_hex(32)).encode()
        self.always_secure = always_secure
        self.max_age = max_age

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cookie = SimpleCookie()
        for name, value in scope.get("headers", []):
            if name == b"cookie":
                try:
                    cookie.load(value.decode("latin-1"))
                except Exception:  # a malformed Cookie header is no session, not a 500
                    pass
        raw = cookie[COOKIE].value if COOKIE in cookie else ""
        session = decode(self.secret, raw, self.max_age) if raw else {}
        scope["session"] = session
        before = json.dumps(session, sort_keys=True)
        secure = self.always_secure or scope.get("scheme") == "https"

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                current = scope["session"]
                if json.dumps(current, sort_keys=True) != before:
                    headers = MutableHeaders(scope=message)
                    headers.append("Set-Cookie", self._cookie(current, secure))
            await send(message)

        await self.app(scope, receive, send_with_cookie)

    def _cookie(self, session: dict[str, Any], secure: bool) -> str:
        flags = "Path=/; HttpOnly; SameSite=Lax" + ("; Secure" if secure else "")
        if not session:
            return f"{COOKIE}=; Max-Age=0; {flags}"
        return f"{COOKIE}={encode(self.secret, session)}; Max-Age={int(self.max_age)}; {flags}"
