"""`GitHubClient.permission` and `is_private` against the fake GitHub over HTTP."""

from __future__ import annotations

from app.github.client import GitHubClient


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
