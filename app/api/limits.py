"""Limits on what an HTTP client may send: body size, JSON nesting, integer range.

`POST /webhooks/github` is public. Its body is read before the signature can be checked, so
the read is bounded: a declared `Content-Length` over `MAX_BODY_BYTES` (GitHub caps payloads
at 25 MB) is refused before a byte is read, and a streamed body (chunked, or lying about its
length) is cut off once it passes the cap. A signed body is then parsed with bounds that keep
any value storable and any walk over it cheap: nesting at most `MAX_DEPTH`, integers within
a signed 64-bit column, no NaN/Infinity. Every refusal is a `BadInput` (a 4xx), never a 500.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

from fastapi import Path as PathParam, Query
from starlette.requests import Request


MAX_BODY_BYTES = 25 * 1024 * 1024
MAX_DEPTH = 64
INT_MAX = 2**63 - 1


# Ids and offsets that fit the database's 64-bit columns (a larger one is a 422, not a 500).
RunId = Annotated[int, PathParam(ge=1, le=INT_MAX)]
Offset = Annotated[int, Query(ge=0, le=INT_MAX)]


class BadInput(ValueError):
    """A request refused with `status` (4xx) and a short `detail`."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


async def read_body(request: Request, max_bytes: int = MAX_BODY_BYTES) -> bytes:
    """The body, at most `max_bytes`; 413 before reading when the declared length is larger."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.strip().isdigit():
            raise BadInput(400, "Content-Length is not a number")
        if int(declared) > max_bytes:
            raise BadInput(413, f"body larger than {max_bytes >> 20} MB")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise BadInput(413, f"body larger than {max_bytes >> 20} MB")
        chunks.append(chunk)
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
