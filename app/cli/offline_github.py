"""A `GitHubPort` for `scrub issue`: serves one saved (or fetched) issue, records every write.

The CLI prints what the pipeline would post instead of posting it. The person running the
CLI is the maintainer, so the collaborator check answers yes (the run is also marked
approved); repros still run in the sandbox. The thread's own authors get the role their
`author_association` shows (a stranger's snippet must not count as a maintainer's).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Json = dict[str, Any]


@dataclass
class Write:
    action: str  # "comment", "labels", "close"
    detail: Json


@dataclass
class OfflineGitHub:
    issue: Json
    comments: list[Json] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)

    def get_issue(self, repo: str, number: int) -> Json:
        return self.issue

    def list_issue_comments(self, repo: str, number: int) -> list[Json]:
        return list(self.comments)

    def is_collaborator(self, repo: str, username: str) -> bool:
        return True

    def permission(self, repo: str, username: str) -> str:
        """A commenter's standing, as far as the saved thread tells (`author_association`):
        a member or owner maintains, a collaborator writes, anyone else reads. Anyone not in
        the thread is the person at the terminal, who runs what they chose to run (admin)."""
        for post in [self.issue, *self.comments]:
            if (post.get("user") or {}).get("login") == username:
                association = str(post.get("author_association") or "").upper()
                return {"OWNER": "admin", "MEMBER": "maintain", "COLLABORATOR": "write"}.get(association, "read")
        return "admin"

    def upsert_comment(self, repo: str, number: int, marker: str, body: str) -> Json:
        self.writes = [w for w in self.writes if not (w.action == "comment" and w.detail["marker"] == marker)]
        self.writes.append(Write("comment", {"marker": marker, "body": body}))
        return {"body": body}

    def create_comment(self, repo: str, number: int, body: str) -> Json:
        self.writes.append(Write("comment", {"marker": None, "body": body}))
        return {"body": body}

    def update_labels(self, repo: str, number: int, add: list[str], remove: list[str]) -> None:
        self.writes.append(Write("labels", {"add": list(add), "remove": list(remove)}))

    def close_issue(self, repo: str, number: int, reason: str = "completed") -> None:
        self.writes.append(Write("close", {"reason": reason}))

    # Offline there is no CI history to ask about: no other run, no issue, no merge base.
    def get_workflow_run(self, repo: str, run_id: int) -> Json:
        return {"id": run_id, "run_attempt": 1, "conclusion": "failure"}

    def list_workflow_runs(self, repo: str, branch: str, per_page: int = 30) -> list[Json]:
        return []

    def merge_base(self, repo: str, base: str, head: str) -> str | None:
        return None

    def list_open_issues(self, repo: str, label: str, limit: int = 300) -> list[Json]:
        return []

    @property
    def comment(self) -> str | None:
        bodies = [w.detail["body"] for w in self.writes if w.action == "comment"]
        return bodies[-1] if bodies else None

    @property
    def labels(self) -> Json:
        add, remove = [], []
        for w in self.writes:
            if w.action == "labels":
                add += w.detail["add"]
                remove += w.detail["remove"]
        return {"add": add, "remove": remove}

    @property
    def closed(self) -> str | None:
        return next((w.detail["reason"] for w in self.writes if w.action == "close"), None)


def repo_and_number(issue: Json) -> tuple[str, int]:
    """`owner/name` and the number, from the issue's `html_url` or `repository_url`."""
    url = issue.get("html_url") or ""
    if "/issues/" in url:
        path = url.split("github.com/", 1)[-1]
        owner_name, _, number = path.partition("/issues/")
        return owner_name, int(number.split("#")[0].split("/")[0])
    api = issue.get("repository_url") or ""
    return "/".join(api.rstrip("/").split("/")[-2:]) or "local/issue", int(issue.get("number") or 0)


SAVED_SHAPE = ('{"issue": {"number": 5, "title": ..., "body": ..., "html_url": '
               '"https://github.com/OWNER/REPO/issues/5", ...}, "comments": [{"body": ..., "user": {...}}]}')


def load_saved(path: Path) -> tuple[Json, list[Json]]:
    """`{"issue": {...}, "comments": [...]}`, or a bare issue object; ValueError saying what is
    wrong (no such file, not JSON, not an issue: with the expected shape) for anything else.

    The one reader of saved issues (`scrub issue FILE`, `scrub demo`); callers print the
    message as an input error."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at line {exc.lineno}); expected {SAVED_SHAPE}") from None
    except FileNotFoundError:
        raise ValueError("no such file") from None
    except IsADirectoryError:
        raise ValueError("a directory, not a saved issue file") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ValueError(exc.strerror or str(exc)) from None
    if not isinstance(data, dict):
        raise ValueError(f"not a JSON object; expected {SAVED_SHAPE}")
    issue, comments = (data["issue"], data.get("comments") or []) if "issue" in data else (data, [])
    validate_issue(issue, comments)
    return issue, list(comments)


def validate_issue(issue: Any, comments: Any) -> None:
    """An issue in GitHub's REST shape: a title or body (strings), a number or an issue URL."""
    if not isinstance(issue, dict):
        raise ValueError(f'"issue" is not an object; expected {SAVED_SHAPE}')
    if not isinstance(issue.get("title"), str) and not isinstance(issue.get("body"), str):
        keys = ", ".join(sorted(map(str, issue))[:8]) or "none"
        raise ValueError(f"this is not a GitHub issue: no \"title\" or \"body\" (keys: {keys}); expected {SAVED_SHAPE}")
    if issue.get("body") is not None and not isinstance(issue["body"], str):
        raise ValueError('"body" must be a string (the issue\'s markdown)')
    has_url = "/issues/" in str(issue.get("html_url") or "")
    if not has_url and not isinstance(issue.get("number"), int):
        raise ValueError('the issue needs a "number" or an "html_url" like https://github.com/OWNER/REPO/issues/N')
    if not isinstance(comments, list) or not all(isinstance(c, dict) for c in comments):
        raise ValueError('"comments" must be a list of comment objects')


_SHORT = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+)#(?P<number>\d+)$")


def parse_issue_url(url: str) -> tuple[str, int] | None:
    """`https://github.com/o/r/issues/N` or `o/r#N` -> ("o/r", N); None for anything else."""
    short = _SHORT.match(url.strip())
    if short:
        return short.group("repo"), int(short.group("number"))
    prefix = "https://github.com/"
    if not url.startswith(prefix):
        return None
    parts = url[len(prefix):].split("#")[0].split("?")[0].strip("/").split("/")
    if len(parts) == 4 and parts[2] == "issues" and parts[3].isdigit():
        return f"{parts[0]}/{parts[1]}", int(parts[3])
    return None
