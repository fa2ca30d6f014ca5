"""The key two reports of one failure share: `Class: first message line`, normalized the way
repro signatures are (`signature.make_signature`), from a CI failure or an issue's run alike.

An error too generic to tell two bugs apart has no key (""): no message, or a message of a
few characters (`AssertionError`, `AssertionError: False`, a bare signal). Matching on those
would call every assertion failure the same bug.
"""

from __future__ import annotations

from app.engine.verdict.signature import first_line, make_signature

MIN_MESSAGE = 12  # characters of message a key needs


def error_key(exception: str, message: str) -> str:
    line = first_line(message or "")
    if not exception or len(line.strip()) < MIN_MESSAGE:
        return ""
    return make_signature(exception, line).text[:500]
