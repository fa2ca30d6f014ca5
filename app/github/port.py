"""What pipelines may ask of GitHub. `app.github.client.GitHubClient` implements it over
githubkit; tests run it against a local fake REST server; the CLI uses an offline recorder.

Every write is idempotent: comments carry a hidden marker `<!-- scrubbot:run=ID:KIND -->`
and are edited, not duplicated, on a retry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

Json = dict[str, Any]


def comment_marker(run_id: int, kind: str) -> str:
    return f"<!-- scrubbot:run={run_id}:{kind} -->"


class GitHubPort(Protocol):
    def get_issue(self, repo: str, number: int) -> Json: ...

    def list_issue_comments(self, repo: str, number: int) -> list[Json]: ...

    def is_collaborator(self, repo: str, username: str) -> bool: ...

    def create_comment(self, repo: str, number: int, body: str) -> Json: ...

    def upsert_comment(self, repo: str, number: int, marker: str, body: str) -> Json:
        """Edit the comment that contains `marker`, or create one; the body includes the marker."""

    def update_labels(self, repo: str, number: int, add: list[str], remove: list[str]) -> None:
        """Add all of `add` in one call; remove each of `remove` that is present."""

    def close_issue(self, repo: str, number: int, reason: str = "completed") -> None: ...

    def get_workflow_run(self, repo: str, run_id: int) -> Json: ...

    def list_run_jobs(self, repo: str, run_id: int, attempt: int | None = None) -> list[Json]: ...

    def download_run_logs(self, repo: str, run_id: int, dest: Path, attempt: int | None = None) -> Path:
        """Follow the 302 to the zip and stream it to `dest`; returns `dest`."""

    def upsert_pull(self, repo: str, head: str, base: str, title: str, body: str, draft: bool = True) -> Json:
        """Create a draft PR from `head`, or update the open one with the same head."""

    def clone_url(self, repo: str) -> str:
        """An https URL for git with the installation/user token (never logged)."""
