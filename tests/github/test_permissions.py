"""`GitHubClient.permission` and `is_private`, and `app.github.permissions` (the fail-closed role
lookup), against the fake GitHub over HTTP."""

from __future__ import annotations

from app.github.client import GitHubClient
from app.github.permissions import UNKNOWN, may_write, role_of


def test_levels_of_collaborators_and_strangers(fake_github):
    fake_github.add_collaborator("o/pub", "wanda", "maintain")
    fake_github.add_collaborator("o/pub", "tess", "triage")
    fake_github.set_private("o/priv")
    client = GitHubClient(token="t", base_url=fake_github.url)
    assert client.permission("o/pub", "wanda") == "maintain"  # the role, not the coarse level
    assert client.permission("o/pub", "tess") == "triage"
    assert client.permission("o/pub", "stranger") == "read"  # anyone reads a public repository
    assert client.permission("o/priv", "stranger") == "none"
    assert client.is_private("o/priv") and not client.is_private("o/pub")


# -- app.github.permissions: the role that decides, failing closed -------------------------------

def test_role_of_is_the_role_on_the_repository_not_being_a_collaborator(fake_github):
    fake_github.add_collaborator("o/pub", "reed", "read")
    fake_github.add_collaborator("o/pub", "tess", "triage")
    fake_github.add_collaborator("o/pub", "wanda", "write")
    client = GitHubClient(token="t", base_url=fake_github.url)
    assert client.is_collaborator("o/pub", "reed")  # a collaborator ...
    assert role_of(client, "o/pub", "reed") == "read"  # ... who may only read
    assert [may_write(role_of(client, "o/pub", u)) for u in ("reed", "tess", "wanda", "stranger")] == [
        False, False, True, False]


def test_nothing_said_or_an_error_is_no_permission(fake_github):
    fake_github.add_collaborator("o/pub", "wanda", "admin")
    client = GitHubClient(token="t", base_url=fake_github.url)
    assert role_of(client, "o/gone", "wanda") == "none"  # GitHub knows nothing of it: 404
    assert role_of(client, "o/pub", "") == "none"  # nobody to ask about: no request at all
    assert not any(r.path.endswith("/collaborators//permission") for r in fake_github.requests)
    for status in (401, 403, 404, 422):
        fake_github.inject_failure("GET", "/collaborators/wanda/permission", status=status, message="nope")
        assert role_of(client, "o/pub", "wanda") == ("none" if status == 404 else UNKNOWN)
    assert role_of(client, "o/pub", "wanda") == "admin"  # the failures are used up
    assert not may_write(UNKNOWN) and not may_write("none")


def test_an_exception_of_any_kind_is_unknown_not_raised():
    class Broken:
        def permission(self, repo: str, username: str) -> str:
            raise KeyError("role_name")

    class Vague:
        def permission(self, repo: str, username: str):
            return None

    assert role_of(Broken(), "o/r", "wanda") == UNKNOWN
    assert role_of(Vague(), "o/r", "wanda") == "none"
