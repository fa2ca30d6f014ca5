"""Limits on what an HTTP client may send: body size, JSON nesting, integer range.

Every request's body is bounded as it streams in (`BodyLimit`, an ASGI middleware in front of
every route): a declared `Content-Length` over the route's cap is a 413 before a byte is read,
and a streamed body (chunked, or lying about its length) is cut off with a 413 once it passes
the cap, whichever code reads it (a route, the CSRF check's form parser, FastAPI). The cap is
`MAX_BODY_BYTES` for `POST /webhooks/github` (GitHub caps payloads at 25 MB: its body is read
before the signature can be checked) and `MAX_FORM_BYTES` for everything else (the status
page's forms are a token and a reason).

A signed webhook body is then parsed with bounds that keep any value storable and any walk over
it cheap: nesting at most `MAX_DEPTH`, integers within a signed 64-bit column, no
NaN/Infinity. Every refusal is a `BadInput` or `BodyTooLarge` (a 4xx), never a 500.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

from fastapi import Path as PathParam, Query
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send


MAX_BODY_BYTES = 25 * 1024 * 1024
MAX_FORM_BYTES = 64 * 1024  # every route but the webhook
BODY_CAPS = {"/webhooks/github": MAX_BODY_BYTES}  # path -> cap; others: MAX_FORM_BYTES
MAX_DEPTH = 64
INT_MAX = 2**63 - 1


# A run id fits the `run.id` column: INTEGER, 32 bits on Postgres (a larger one is a 422, not a
# 500 from the database's "integer out of range"). Offsets fit 64 bits (OFFSET takes a bigint).
RUN_ID_MAX = 2**31 - 1
RunId = Annotated[int, PathParam(ge=1, le=RUN_ID_MAX)]
Offset = Annotated[int, Query(ge=0, le=INT_MAX)]
Sha256 = Annotated[str | None, Query(pattern="^[0-9a-f]{64}$")]  # a hex SHA-256 digest


class BadInput(ValueError):
    """A request refused with `status` (4xx) and a short `detail`."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def _size(n: int) -> str:
    return f"{n >> 20} MB" if n >= 1 << 20 else f"{n >> 10} KiB"


class BodyTooLarge(HTTPException):
    """Raised from `receive` once a body passes its cap: FastAPI answers it 413."""

    def __init__(self, cap: int) -> None:
        super().__init__(413, f"body larger than {_size(cap)}")


def declared_length_problem(headers: Headers, cap: int) -> BadInput | None:
    declared = headers.get("content-length")
    if declared is None:
        return None
    if not declared.strip().isdigit():
        return BadInput(400, "Content-Length is not a number")
    if int(declared) > cap:
        return BadInput(413, f"body larger than {_size(cap)}")
    return None


class BodyLimit:
    """ASGI middleware: every body bounded as it streams in (see the module docstring)."""

    def __init__(self, app: ASGIApp, caps: dict[str, int] | None = None, default: int = MAX_FORM_BYTES) -> None:
        self.app, self.caps, self.default = app, BODY_CAPS if caps is None else caps, default

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = self.caps.get(scope.get("path", ""), self.default)
        if problem := declared_length_problem(Headers(scope=scope), cap):
            await JSONResponse({"status": "refused", "detail": problem.detail}, problem.status)(scope, receive, send)
            return
        seen = 0

        async def bounded() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > cap:
                    raise BodyTooLarge(cap)
            return message

        await self.app(scope, bounded, send)


async def read_body(request: Request, max_bytes: int = MAX_BODY_BYTES) -> bytes:
    """The body, at most `max_bytes`; 413 before reading when the declared length is larger
    (`BodyLimit` in front of the app already bounds it; this keeps a route's own cap)."""
    if problem := declared_length_problem(request.headers, max_bytes):
        raise problem
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > max_bytes:
                raise BadInput(413, f"body larger than {_size(max_bytes)}")
            chunks.append(chunk)
    except BodyTooLarge as exc:
        raise BadInput(413, str(exc.detail)) from None
    return b"".join(chunks)


def _bounded_int(text: str) -> int:
    if len(text) > 20:  # longer than any 64-bit integer: do not even convert it
        raise ValueError("integer out of range")
    value = int(text)
    if not -INT_MAX - 1 <= value <= INT_MAX:
        raise ValueError("integer out of range")
    return value


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError("number out of range")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _depth_ok(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return False
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return True


def parse_json(body: bytes, max_depth: int = MAX_DEPTH) -> Any:
    """`body` as JSON within the bounds above; `BadInput(400|422)` otherwise."""
    try:
        value = json.loads(body, parse_int=_bounded_int, parse_float=_finite_float,
                           parse_constant=_no_constant)
    except RecursionError:
        raise BadInput(422, f"JSON nested deeper than {max_depth} levels") from None
    except ValueError as exc:  # includes UnicodeDecodeError
        if "out of range" in str(exc):
            raise BadInput(422, "JSON number out of range (integers: 64-bit)") from None
        raise BadInput(400, "body is not valid JSON") from None
    if not _depth_ok(value, max_depth):
        raise BadInput(422, f"JSON nested deeper than {max_depth} levels")
    return value
