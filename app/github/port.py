"""What pipelines may ask of GitHub. `app.github.client.GitHubClient` implements it over
githubkit; tests run it against a local fake REST server; the CLI uses an offline recorder.

Every write is idempotent: comments carry a hidden marker `<!-- scrubbot:run=ID:KIND -->`
and are edited, not duplicated, on a retry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

Json = dict[str, Any]


class GitHubAPIError(RuntimeError):
    """A GitHub call that failed: `status` is the HTTP code (0: no answer, e.g. a timeout),
    `message` GitHub's message. Implementations raise it instead of their library's errors."""

    def __init__(self, status: int, message: str, method: str = "", path: str = "") -> None:
        where = f" {method} {path}" if method or path else ""
        super().__init__(f"GitHub{where} -> {status}: {message}")
        self.status = status
        self.message = message
        self._where = (method, path)

    def __reduce__(self):  # picklable (Celery results), despite the extra arguments
        return (type(self), (self.status, self.message, *self._where))

    @property
    def transient(self) -> bool:
        """Worth retrying later: no answer, rate limited, or a server error."""
        return self.status == 0 or self.status == 429 or self.status >= 500 or (
            self.status == 403 and "rate limit" in self.message.lower())


class ArchiveTooLarge(ValueError):
    """A log archive larger than the caller allows: not kept, and not worth retrying."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the log archive is larger than {limit // (1 << 20)} MiB")
        self.limit = limit

    def __reduce__(self):
        return (type(self), (self.limit,))


def comment_marker(run_id: int, kind: str) -> str:
    return f"<!-- scrubbot:run={run_id}:{kind} -->"


class GitHubPort(Protocol):
    def get_issue(self, repo: str, number: int) -> Json: ...

    def list_issue_comments(self, repo: str, number: int) -> list[Json]: ...

    def is_collaborator(self, repo: str, username: str) -> bool:
        """Only who gets `/scrub help`: a collaborator may hold read only, so anything that runs
        code or changes a run asks `permission` instead (app/github/permissions.py)."""

    def permission(self, repo: str, username: str) -> str:
        """The user's role on the repository: admin, maintain, write, triage, read or none."""

    def create_comment(self, repo: str, number: int, body: str) -> Json: ...

    def upsert_comment(self, repo: str, number: int, marker: str, body: str) -> Json:
        """Edit the comment that contains `marker`, or create one; the body includes the marker."""

    def update_labels(self, repo: str, number: int, add: list[str], remove: list[str]) -> None:
        """Add all of `add` in one call; remove each of `remove` that is present."""

    def close_issue(self, repo: str, number: int, reason: str = "completed") -> None: ...

    def get_workflow_run(self, repo: str, run_id: int) -> Json: ...

    def list_run_jobs(self, repo: str, run_id: int, attempt: int | None = None) -> list[Json]: ...

    def download_run_logs(self, repo: str, run_id: int, dest: Path, attempt: int | None = None,
                          max_bytes: int | None = None) -> Path:
        """Follow the 302 to the zip and stream it to `dest`; returns `dest`. Past `max_bytes`:
        `ArchiveTooLarge`, nothing kept."""

    def list_workflow_runs(self, repo: str, branch: str, per_page: int = 30) -> list[Json]:
        """The newest completed workflow runs on `branch`, newest first (one page)."""

    def merge_base(self, repo: str, base: str, head: str) -> str | None:
        """The merge base of commit `head` with branch `base` (GitHub's compare)."""

    def list_open_issues(self, repo: str, label: str, limit: int = 300) -> list[Json]:
        """Open issues (no pull requests) carrying `label`."""

    def upsert_pull(self, repo: str, head: str, base: str, title: str, body: str, draft: bool = True) -> Json:
        """Create a draft PR from `head`, or update the open one with the same head."""

    def clone_url(self, repo: str) -> str:
        """An https URL for git with the installation/user token (never logged)."""

    def read_clone_url(self, repo: str) -> str:
        """An https URL that can fetch `repo` and nothing else: App mode, a token scoped to it
        with `contents: read`; token mode, no credential (the personal token is never handed
        on). For repro workers (the trust split, `workers/jobs.py`)."""

    # Culprits and progression (app.pipelines.kit.culprit, the progression kind).
    def get_pull(self, repo: str, number: int) -> Json: ...

    def close_pull(self, repo: str, number: int) -> None: ...

    def get_commit(self, repo: str, sha: str) -> Json: ...

    def compare_commits(self, repo: str, base: str, head: str) -> Json:
        """`base...head`: `commits` (all, oldest first), `total_commits`, `files` (at most 300)."""

    def commit_pulls(self, repo: str, sha: str) -> list[Json]:
        """The pull requests associated with a commit (`commits/{sha}/pulls`)."""

    def file_at(self, repo: str, path: str, ref: str) -> str | None:
        """A file's text at `ref`; None when the file is not there."""
