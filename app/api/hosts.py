"""Trusted `Host` headers only: what defeats DNS rebinding.

A page on `evil.example` can make its own name resolve to 127.0.0.1 and then read this server
as if it were its own origin (same-origin: no CORS stands in the way). The browser still sends
`Host: evil.example:8000`. So the status page and the API answer only requests whose `Host` is a
loopback name (`localhost`, `127.0.0.1`, any `127.x` or `::1`), the host of `SCRUB_PUBLIC_URL`,
one of `SCRUB_ALLOWED_HOSTS`, or the specific address `scrub serve --host` binds; anything else
is a 400 before any route runs. `POST /webhooks/github` (authenticated by its HMAC signature,
and reached through whatever tunnel or proxy name GitHub was given) and `GET /healthz`
(container probes use the container's address) are exempt.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from app.settings import Settings

EXEMPT_PATHS = frozenset({"/webhooks/github", "/healthz"})
LOOPBACK_NAMES = frozenset({"localhost", "localhost."})
WILDCARD_BINDS = frozenset({"", "0.0.0.0", "::", "[::]"})


def host_name(header: str) -> str:
    """The name in a `Host` header, lowercased, without the port (`[::1]:8000` -> `::1`)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def is_loopback(name: str) -> bool:
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def trusted_names(settings: Settings, bound_host: str | None = None) -> frozenset[str]:
    """The names besides loopback this server answers to."""
    names = {name.strip().lower() for name in settings.allowed_hosts.split(",") if name.strip()}
    if settings.public_url:
        public = urlsplit(settings.public_url).hostname
        if public:
            names.add(public.lower())
    if bound_host and bound_host.strip().lower() not in WILDCARD_BINDS:
        names.add(host_name(bound_host))
    return frozenset(names)


class TrustedHosts:
    """ASGI middleware: 400 for a request whose `Host` is not one of this server's names."""

    def __init__(self, app: ASGIApp, names: Iterable[str]) -> None:
        self.app = app
        self.names = frozenset(names)

    def allows(self, header: str) -> bool:
        name = host_name(header)
        return bool(name) and (is_loopback(name) or name in self.names)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope.get("path") in EXEMPT_PATHS:
            await self.app(scope, receive, send)
            return
        header = next((value.decode("latin-1") for name, value in scope.get("headers", []) if name == b"host"), "")
        if not self.allows(header):
            response = PlainTextResponse(
                "This server does not answer to that host name (DNS rebinding protection). Use "
                "http://127.0.0.1:<port>/ or SCRUB_PUBLIC_URL, or add the name to SCRUB_ALLOWED_HOSTS.", 400)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)
