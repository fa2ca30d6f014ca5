"""In-memory state of the fake GitHub, and the helpers tests use to seed and read it.

Objects are stored in GitHub's REST shapes (plain dicts), so a route returns them as they are.
Repository names are case-insensitive, like GitHub's. `add_*` create the repository on demand.
"""

from __future__ import annotations

import itertools
import threading
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable

Json = dict[str, Any]
HOST = "https://github.com"


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def user_json(login: str) -> Json:
    return {"login": login, "id": zlib.crc32(login.encode()) % 10**8, "type": "User",
            "html_url": f"{HOST}/{login}"}


def label_json(name: str) -> Json:
    return {"id": zlib.crc32(name.encode()) % 10**8, "name": name, "color": "ededed",
            "default": False, "description": None}


@dataclass
class RepoState:
    full_name: str
    installation_id: int = 1
    default_branch: str = "main"
    issues: dict[int, Json] = field(default_factory=dict)
    comments: dict[int, list[Json]] = field(default_factory=dict)  # issue number -> comments
    collaborators: set[str] = field(default_factory=set)
    roles: dict[str, str] = field(default_factory=dict)  # login -> admin/maintain/write/triage/read
    private: bool = False
    runs: dict[int, Json] = field(default_factory=dict)  # run id -> latest attempt's run
    run_attempts: dict[tuple[int, int], Json] = field(default_factory=dict)
    jobs: dict[tuple[int, int], list[Json]] = field(default_factory=dict)  # (run, attempt)
    logs: dict[tuple[int, int], bytes] = field(default_factory=dict)
    pulls: dict[int, Json] = field(default_factory=dict)


@dataclass
class FakeGitHubState:
    """Repositories and their objects; thread-safe through `lock`."""

    repos: dict[str, RepoState] = field(default_factory=dict)
    installation_tokens: dict[str, int] = field(default_factory=dict)  # token -> installation
    # token -> (repository names it is limited to, or None: all; permissions, or {}: all)
    token_scopes: dict[str, tuple[set[str] | None, dict[str, str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.lock = threading.RLock()
        self._ids = itertools.count(1000)
        self.blobs: dict[str, bytes] = {}

    def next_id(self) -> int:
        return next(self._ids)

    # -- seeding ----------------------------------------------------------------------------
    def add_repo(self, repo: str, *, installation_id: int = 1, default_branch: str = "main") -> RepoState:
        """Create (or return) `owner/name`, installed as `installation_id`."""
        with self.lock:
            key = repo.lower()
            if key not in self.repos:
                self.repos[key] = RepoState(repo, installation_id, default_branch)
            return self.repos[key]

    def get_repo(self, repo: str) -> RepoState | None:
        with self.lock:
            return self.repos.get(repo.lower())

    def add_issue(
        self, repo: str, number: int | None = None, *, title: str = "", body: str | None = "",
        user: str = "octocat", author_association: str = "NONE", labels: Iterable[str] = (),
        state: str = "open", state_reason: str | None = None, **extra: Any,
    ) -> Json:
        """Seed an issue; `number` defaults to the next free one (shared with pulls)."""
        with self.lock:
            r = self.add_repo(repo)
            number = number or self._next_number(r)
            base = f"https://api.github.com/repos/{r.full_name}/issues/{number}"
            issue = {
                "id": self.next_id(), "node_id": f"I_{number}", "number": number,
                "title": title, "body": body, "state": state, "state_reason": state_reason,
                "user": user_json(user), "author_association": author_association,
                "labels": [label_json(n) for n in labels], "assignees": [], "locked": False,
                "comments": 0, "url": base, "comments_url": f"{base}/comments",
                "html_url": f"{HOST}/{r.full_name}/issues/{number}",
                "repository_url": f"https://api.github.com/repos/{r.full_name}",
                "created_at": now_iso(), "updated_at": now_iso(),
                "closed_at": now_iso() if state == "closed" else None,
            }
            issue.update(extra)
            r.issues[number] = issue
            r.comments.setdefault(number, [])
            return issue

    def add_comment(
        self, repo: str, number: int, body: str, *, user: str = "octocat",
        author_association: str = "NONE", **extra: Any,
    ) -> Json:
        """Seed a comment on issue `number` (the issue is created if missing)."""
        with self.lock:
            r = self.add_repo(repo)
            if number not in r.issues:
                self.add_issue(repo, number)
            cid = self.next_id()
            comment = {
                "id": cid, "node_id": f"IC_{cid}", "body": body, "user": user_json(user),
                "author_association": author_association, "created_at": now_iso(),
                "updated_at": now_iso(),
                "html_url": f"{HOST}/{r.full_name}/issues/{number}#issuecomment-{cid}",
                "url": f"https://api.github.com/repos/{r.full_name}/issues/comments/{cid}",
                "issue_url": r.issues[number]["url"],
            }
            comment.update(extra)
            r.comments[number].append(comment)
            r.issues[number]["comments"] = len(r.comments[number])
            return comment

    def add_collaborator(self, repo: str, login: str, role: str = "write") -> None:
        with self.lock:
            state = self.add_repo(repo)
            state.collaborators.add(login.lower())
            state.roles[login.lower()] = role

    def set_private(self, repo: str, private: bool = True) -> None:
        """Make `repo` private: strangers get permission "none" and `private: true`."""
        with self.lock:
            self.add_repo(repo).private = private

    def add_workflow_run(
        self, repo: str, run_id: int | None = None, *, name: str = "CI",
        path: str = ".github/workflows/ci.yml", head_sha: str = "a" * 40,
        head_branch: str = "main", conclusion: str | None = "failure", status: str = "completed",
        run_attempt: int = 1, event: str = "push",
        jobs: list[Json] | dict[int, list[Json]] | None = None,
        logs_zip: bytes | dict[int, bytes] | None = None, **extra: Any,
    ) -> Json:
        """Seed a run whose latest attempt is `run_attempt`.

        jobs / logs_zip: for the latest attempt, or `{attempt: ...}` for several. Each job dict
        may be partial (`{"name": "test", "conclusion": "failure"}`); ids and urls are filled in.
        Returns the run as `GET /actions/runs/{id}` answers it.
        """
        with self.lock:
            r = self.add_repo(repo)
            run_id = run_id or self.next_id()
            jobs_by = jobs if isinstance(jobs, dict) else {run_attempt: jobs or []}
            logs_by = logs_zip if isinstance(logs_zip, dict) else (
                {run_attempt: logs_zip} if logs_zip is not None else {})
            api = f"https://api.github.com/repos/{r.full_name}/actions/runs/{run_id}"
            for attempt in sorted(set(jobs_by) | set(logs_by) | {run_attempt}):
                run = {
                    "id": run_id, "name": name, "path": path, "head_sha": head_sha,
                    "head_branch": head_branch, "run_attempt": attempt, "event": event,
                    "status": status if attempt == run_attempt else "completed",
                    "conclusion": conclusion, "run_number": run_id % 10000,
                    "workflow_id": zlib.crc32(path.encode()) % 10**6,
                    "html_url": f"{HOST}/{r.full_name}/actions/runs/{run_id}"
                    + (f"/attempts/{attempt}" if attempt != run_attempt else ""),
                    "url": api, "jobs_url": f"{api}/jobs", "logs_url": f"{api}/logs",
                    "repository": {"full_name": r.full_name},
                    "created_at": now_iso(), "updated_at": now_iso(),
                }
                run.update(extra)
                r.run_attempts[(run_id, attempt)] = run
                r.jobs[(run_id, attempt)] = [
                    self._job(r, run_id, attempt, head_sha, job) for job in jobs_by.get(attempt, [])
                ]
                if attempt in logs_by:
                    r.logs[(run_id, attempt)] = logs_by[attempt]
            r.runs[run_id] = r.run_attempts[(run_id, run_attempt)]
            return r.runs[run_id]

    def _job(self, r: RepoState, run_id: int, attempt: int, sha: str, job: Json) -> Json:
        jid = job.get("id") or self.next_id()
        out = {
            "id": jid, "run_id": run_id, "run_attempt": attempt, "name": "build",
            "status": "completed", "conclusion": "success", "head_sha": sha, "steps": [],
            "html_url": f"{HOST}/{r.full_name}/actions/runs/{run_id}/job/{jid}",
            "started_at": now_iso(), "completed_at": now_iso(), "labels": ["ubuntu-latest"],
        }
        out.update(job)
        return out

    def add_pull(
        self, repo: str, head: str, base: str = "main", *, title: str = "", body: str = "",
        draft: bool = True, state: str = "open", number: int | None = None,
        user: str = "scrubbot[bot]",
    ) -> Json:
        """Seed a PR from branch `head` (`"branch"` or `"owner:branch"`) into `base`."""
        with self.lock:
            r = self.add_repo(repo)
            owner = r.full_name.split("/")[0]
            h_owner, _, h_ref = head.rpartition(":")
            number = number or self._next_number(r)
            pr = {
                "id": self.next_id(), "number": number, "title": title, "body": body,
                "state": state, "draft": draft, "merged": False,
                "head": {"ref": h_ref, "label": f"{h_owner or owner}:{h_ref}",
                         "repo": {"full_name": r.full_name}},
                "base": {"ref": base, "label": f"{owner}:{base}",
                         "repo": {"full_name": r.full_name}},
                "html_url": f"{HOST}/{r.full_name}/pull/{number}",
                "url": f"https://api.github.com/repos/{r.full_name}/pulls/{number}",
                "user": user_json(user), "created_at": now_iso(),
                "updated_at": now_iso(),
            }
            r.pulls[number] = pr
            if number not in r.issues:  # on GitHub every PR is an issue too (comments, labels)
                self.add_issue(repo, number, title=title, body=body, user=user, state=state,
                               pull_request={"url": pr["url"], "html_url": pr["html_url"]})
            return pr

    def _next_number(self, r: RepoState) -> int:
        return max([0, *r.issues, *r.pulls]) + 1

    # -- reading ----------------------------------------------------------------------------
    def issue(self, repo: str, number: int) -> Json:
        with self.lock:
            return self.repos[repo.lower()].issues[number]

    def comments(self, repo: str, number: int) -> list[Json]:
        with self.lock:
            return list(self.repos[repo.lower()].comments.get(number, []))

    def pulls(self, repo: str) -> list[Json]:
        with self.lock:
            r = self.repos.get(repo.lower())
            return list(r.pulls.values()) if r else []

    def label_names(self, repo: str, number: int) -> list[str]:
        return [label["name"] for label in self.issue(repo, number)["labels"]]
