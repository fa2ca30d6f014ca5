"""The fake GitHub's endpoints for CI history: a repository's workflow runs, its open issues by
label, and the compare API (its merge base), answered the way GitHub answers them.

- `GET /repos/{o}/{r}/actions/runs?branch=&event=&status=&per_page=`: `{"total_count",
  "workflow_runs"}`, newest first (the latest attempt of each run).
- `GET /repos/{o}/{r}/issues?state=&labels=a,b`: issues carrying every label, newest first.
- `GET /repos/{o}/{r}/compare/{base}...{head}`: `merge_base_commit`, `status`, `ahead_by`,
  `behind_by`, computed by git over the repository `FakeGitHub.serve_git` serves (404 without
  one, or when a side is unknown, as GitHub answers).
"""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from tests.fakes.fake_github_routes import error, not_found, paginate, route
from tests.fakes.fake_github_state import RepoState

if TYPE_CHECKING:
    from tests.fakes.fake_github import FakeGitHub


def list_runs(request: Request, repo: RepoState, body: Any) -> Response:
    q = request.query_params
    runs = sorted(repo.runs.values(), key=lambda r: r["id"], reverse=True)
    for name in ("branch", "event", "status"):
        if q.get(name):
            key = "head_branch" if name == "branch" else name
            runs = [r for r in runs if r.get(key) == q[name]]
    page, headers = paginate(request, runs)
    return JSONResponse({"total_count": len(runs), "workflow_runs": page}, headers=headers)


def list_issues(request: Request, repo: RepoState, body: Any) -> Response:
    q = request.query_params
    state = q.get("state", "open")
    wanted = {name.strip() for name in q.get("labels", "").split(",") if name.strip()}
    issues = [i for i in sorted(repo.issues.values(), key=lambda i: i["number"], reverse=True)
              if (state == "all" or i["state"] == state) and wanted <= {label["name"] for label in i["labels"]}]
    page, headers = paginate(request, issues)
    return JSONResponse(page, headers=headers)


def _git(bare: str, *args: str) -> str | None:
    done = subprocess.run(["git", *args], cwd=bare, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def compare(fake: "FakeGitHub"):
    def handler(request: Request, repo: RepoState, body: Any) -> Response:
        base, sep, head = request.path_params["basehead"].partition("...")
        bare = fake.git_dirs.get(repo.full_name.lower())
        if not sep or bare is None:
            return not_found()
        base_sha = _git(str(bare), "rev-parse", "--verify", "--end-of-options", f"{base}^{{commit}}")
        head_sha = _git(str(bare), "rev-parse", "--verify", "--end-of-options", f"{head}^{{commit}}")
        if not base_sha or not head_sha:
            return error(404, "Not Found")
        merge_base = _git(str(bare), "merge-base", base_sha, head_sha)
        if merge_base is None:
            return error(404, f"No common ancestor between {base} and {head}.")
        ahead = int(_git(str(bare), "rev-list", "--count", f"{base_sha}..{head_sha}") or 0)
        behind = int(_git(str(bare), "rev-list", "--count", f"{head_sha}..{base_sha}") or 0)
        status = "identical" if not (ahead or behind) else "ahead" if not behind else "behind" if not ahead else "diverged"
        return JSONResponse({"status": status, "ahead_by": ahead, "behind_by": behind, "total_commits": ahead,
                             "base_commit": {"sha": base_sha}, "merge_base_commit": {"sha": merge_base},
                             "commits": [], "files": []})
    return handler


def ci_routes(fake: "FakeGitHub") -> list:
    R = "/repos/{owner}/{repo}"
    return [
        route(fake, R + "/actions/runs", "GET", list_runs),
        route(fake, R + "/issues", "GET", list_issues),
        route(fake, R + "/compare/{basehead:path}", "GET", compare(fake)),
    ]
