"""The status page's shared helpers: what a viewer sees in front of something they may not read
(the same whether it exists or not)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from fastapi import HTTPException, Request
from fastapi.responses import RedirectResponse

from app.api.access import ANONYMOUS, Viewer
from app.web.templating import unreadable


def _request(path: str, public_read: bool = True) -> Request:
    app = SimpleNamespace(state=SimpleNamespace(services=SimpleNamespace(settings=SimpleNamespace(public_read=public_read))))
    return Request({"type": "http", "method": "GET", "path": path, "query_string": b"", "headers": [], "app": app})


def test_where_nothing_is_public_an_anonymous_viewer_is_sent_to_sign_in_and_back():
    answer = unreadable(_request("/runs/7", public_read=False), ANONYMOUS, "run 7")
    assert isinstance(answer, RedirectResponse)
    assert answer.status_code == 303 and answer.headers["location"] == "/login?next=/runs/7"


@pytest.mark.parametrize("viewer", [ANONYMOUS, Viewer("wanda", "session")])
def test_otherwise_the_thing_does_not_exist(viewer):
    """A private run is not told apart from a missing one (the header offers to sign in)."""
    with pytest.raises(HTTPException) as refused:
        unreadable(_request("/runs/7"), viewer, "run 7")
    assert refused.value.status_code == 404 and refused.value.detail == "run 7 not found"
