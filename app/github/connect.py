"""Build the GitHub client a run talks through, from settings and the run's installation.

Contract with `app.github.client`: `GitHubClient.from_settings(settings, installation_id=...)`
returns an object implementing `app.github.port.GitHubPort` (token mode, or App mode with an
installation token for `installation_id`).
"""

from __future__ import annotations

from typing import Any


class GitHubNotConfigured(RuntimeError):
    pass


def github_client(settings: Any, installation_id: int | None = None) -> Any:
    if not settings.github_configured:
        raise GitHubNotConfigured(
            "GitHub is not configured: set SCRUB_GITHUB_TOKEN, or SCRUB_GITHUB_APP_ID and SCRUB_GITHUB_PRIVATE_KEY"
        )
    from app.github.client import GitHubClient  # imported on use: the CLI and tests run without it

    return GitHubClient.from_settings(settings, installation_id=installation_id)


def github_reader(settings: Any) -> Any:
    """A client for reads: the configured credentials, else anonymous (public repositories only,
    60 requests an hour; GitHub answers 404 for a private one). No retry-and-wait on a rate limit."""
    from app.github.client import GitHubClient

    if settings.github_configured:
        return GitHubClient.from_settings(settings, auto_retry=False)
    return GitHubClient(anonymous=True, base_url=settings.github_api_url, auto_retry=False)
