"""The signed session cookie: what a browser holds cannot be forged, replayed forever or read."""

from __future__ import annotations

from app.api.sessions import decode, encode

KEY = b"k" * 32


def test_round_trip():
    assert decode(KEY, encode(KEY, {"user": "wanda", "csrf": "t"})) == {"user": "wanda", "csrf": "t"}


def test_a_changed_or_foreign_cookie_is_no_session():
    value = encode(KEY, {"user": "wanda"})
    body, stamp, signature = value.split(".")
    forged = encode(b"other-key" * 4, {"user": "admin"})
    assert decode(KEY, forged) == {}
    assert decode(KEY, f"{forged.split('.')[0]}.{stamp}.{signature}") == {}  # someone else's body, our signature
    assert decode(KEY, "garbage") == {} and decode(KEY, "a.b.c") == {}


def test_an_old_cookie_has_expired():
    value = encode(KEY, {"user": "wanda"}, now=1_000_000)
    assert decode(KEY, value, max_age=3600, now=1_000_000 + 3599) == {"user": "wanda"}
    assert decode(KEY, value, max_age=3600, now=1_000_000 + 3601) == {}
