"""The fake GitHub's endpoints for CI history: a repository's workflow runs, its open issues by
label, answered the way GitHub answers them (the compare API is `fake_github_commits`).

- `GET /repos/{o}/{r}/actions/runs?branch=&event=&status=&per_page=`: `{"total_count",
  "workflow_runs"}`, newest first (the latest attempt of each run).
- `GET /repos/{o}/{r}/issues?state=&labels=a,b`: issues carrying every label, newest first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from tests.fakes.fake_github_routes import paginate, route
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


def ci_routes(fake: "FakeGitHub") -> list:
    R = "/repos/{owner}/{repo}"
    return [
        route(fake, R + "/actions/runs", "GET", list_runs),
        route(fake, R + "/issues", "GET", list_issues),
    ]
