"""Reads from GitHub for the CLI: the configured credentials or none, and clear messages.

Public issues and run logs need no token (`github_reader`); a refusal becomes one sentence
that says what to do (exit 2), never a traceback.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from app.cli.output import fail

T = TypeVar("T")


def explain(status: int, message: str, what: str, anonymous: bool) -> str:
    """One sentence for a failed read of `what` (GitHub's status and message)."""
    lowered = message.lower()
    if status in (403, 429) and "rate limit" in lowered:
        hint = "anonymous reads get 60 requests an hour: set SCRUB_GITHUB_TOKEN" if anonymous else "wait, or use another token"
        return f"GitHub's rate limit is spent reading {what} ({hint})"
    if status == 404:
        hint = "; if it is private, set SCRUB_GITHUB_TOKEN" if anonymous else " (or the token cannot see it)"
        return f"GitHub says {what} does not exist{hint}"
    if status == 401 and anonymous:
        return f"GitHub requires signing in to read {what}: set SCRUB_GITHUB_TOKEN"
    if status == 401:
        return f"GitHub refused the credentials reading {what}: check SCRUB_GITHUB_TOKEN / the App key"
    if status == 403:
        hint = ("GitHub serves this only to signed-in users: set SCRUB_GITHUB_TOKEN" if anonymous
                else "the token lacks the permission (Actions: read for logs, Issues: read for issues)")
        return f"GitHub refused to show {what} ({message or 'forbidden'}); {hint}"
    if status == 0:
        return f"no answer from GitHub reading {what} ({message}); check the network or SCRUB_GITHUB_API_URL"
    return f"GitHub answered {status} reading {what}: {message}"


def read(what: str, call: Callable[[Any], T]) -> T:
    """`call(client)` with the reader client; a GitHub error exits 2 with `explain(...)`."""
    from app.github.connect import github_reader
    from app.github.port import GitHubAPIError
    from app.settings import get_settings

    settings = get_settings()
    try:
        client = github_reader(settings)
        return call(client)
    except GitHubAPIError as exc:
        fail(explain(exc.status, exc.message, what, anonymous=not settings.github_configured))
    except ValueError as exc:  # e.g. an unreadable App private key
        fail(f"GitHub is misconfigured: {exc}")
