"""The status page's shared helpers: what a viewer sees in front of something they may not read."""

from __future__ import annotations

import pytest
from fastapi import HTTPException, Request
from fastapi.responses import RedirectResponse

from app.api.access import ANONYMOUS, Viewer
from app.web.templating import unreadable


def _request(path: str) -> Request:
    return Request({"type": "http", "method": "GET", "path": path, "query_string": b"", "headers": []})


def test_an_anonymous_viewer_is_sent_to_sign_in_and_back():
    answer = unreadable(_request("/runs/7"), ANONYMOUS, "run 7")
    assert isinstance(answer, RedirectResponse)
    assert answer.status_code == 303 and answer.headers["location"] == "/login?next=/runs/7"


def test_a_signed_in_viewer_is_told_the_thing_does_not_exist():
    with pytest.raises(HTTPException) as refused:
        unreadable(_request("/runs/7"), Viewer("wanda", "session"), "run 7")
    assert refused.value.status_code == 404 and refused.value.detail == "run 7 not found"

