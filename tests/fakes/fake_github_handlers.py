"""Endpoint handlers of the fake GitHub: `handler(request, repo, body) -> Response`.

They run under the fake's lock, with authentication and the repository already checked by
`fake_github_routes.route`. Factories (`create_token(fake)`, ...) close over the fake.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from tests.fakes.fake_github_routes import error, not_found, paginate
from tests.fakes.fake_github_state import RepoState, label_json, now_iso, user_json

if TYPE_CHECKING:
    from tests.fakes.fake_github import FakeGitHub

APP_SLUG = "scrubbot"
BOT = f"{APP_SLUG}[bot]"


def author(request: Request) -> str:
    """Who a write is made as: the App's bot with an installation token, else the token user."""
    if getattr(request.state, "auth_kind", "") == "installation":
        return BOT
    return request.app.state.fake.user_login


def _p(request: Request, name: str) -> Any:
    return request.path_params[name]


# -- app / installation -------------------------------------------------------------------
def get_app(request: Request, repo: None, body: Any) -> Response:
    return JSONResponse({"id": 1, "slug": APP_SLUG, "name": "Scrubbot"})


def list_installations(fake: "FakeGitHub"):
    def handler(request: Request, repo: None, body: Any) -> Response:
        with fake.lock:
            owners = sorted({(state.installation_id, name.split("/")[0]) for name, state in fake.repos.items()})
        return JSONResponse([{"id": iid, "account": {"login": owner, "type": "User"}, "app_id": fake.app_id or 1}
                             for iid, owner in owners])
    return handler


def list_deliveries(fake: "FakeGitHub"):
    def handler(request: Request, repo: None, body: Any) -> Response:
        with fake.lock:
            return JSONResponse(list(fake.hook_deliveries))
    return handler


def get_user(request: Request, repo: None, body: Any) -> Response:
    if getattr(request.state, "auth_kind", "") == "installation":
        return error(403, "Resource not accessible by integration")
    fake = request.app.state.fake
    token = request.headers.get("authorization", "").partition(" ")[2].strip()
    return JSONResponse(user_json(fake.oauth_tokens.get(token, fake.user_login)))


def create_token(fake: "FakeGitHub"):
    """An installation token; `repositories` (names) and `permissions` in the body narrow it,
    as GitHub does (a permission the App lacks is a 422, here: only the known ones)."""
    full = {"contents": "write", "issues": "write", "pull_requests": "write", "actions": "read"}

    def handler(request: Request, repo: None, body: Any) -> Response:
        iid = _p(request, "iid")
        installed = [r for r in fake.repos.values() if r.installation_id == iid]
        if not installed:
            return not_found()
        body = body or {}
        names = body.get("repositories")
        if names is not None and not {n.lower() for n in names} <= {r.full_name.split("/")[1].lower() for r in installed}:
            return error(422, "There is at least one repository that does not exist or is not accessible to the parent installation.")
        permissions = body.get("permissions") or full
        if any(full.get(k) is None or (v == "write" and full[k] != "write") for k, v in permissions.items()):
            return error(422, "The permissions requested are not granted to this installation.")
        expires = datetime.now(timezone.utc) + timedelta(hours=1)
        token = fake.new_installation_token(iid, repositories=names, permissions=permissions)
        return JSONResponse({
            "token": token,
            "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "permissions": permissions,
            "repository_selection": "selected" if names is not None else "all",
        }, status_code=201)
    return handler


def get_installation(request: Request, repo: RepoState, body: Any) -> Response:
    owner = repo.full_name.split("/")[0]
    return JSONResponse({"id": repo.installation_id, "account": user_json(owner),
                         "app_id": 1, "target_type": "Organization"})


def get_repo(request: Request, repo: RepoState, body: Any) -> Response:
    return JSONResponse({"full_name": repo.full_name, "name": repo.full_name.split("/")[1],
                         "owner": user_json(repo.full_name.split("/")[0]),
                         "default_branch": repo.default_branch, "private": repo.private})


# -- issues, comments, labels -------------------------------------------------------------
def _issue(request: Request, repo: RepoState) -> dict | None:
    return repo.issues.get(_p(request, "number"))


def get_issue(request: Request, repo: RepoState, body: Any) -> Response:
    issue = _issue(request, repo)
    return JSONResponse(issue) if issue else not_found()


def update_issue(request: Request, repo: RepoState, body: Any) -> Response:
    issue = _issue(request, repo)
    if issue is None:
        return not_found()
    body = body or {}
    if body.get("state") not in (None, "open", "closed"):
        return error(422, "Validation Failed")
    if body.get("state_reason") not in (None, "completed", "not_planned", "reopened", "duplicate"):
        return error(422, "Validation Failed")
    for key in ("title", "body", "state", "state_reason"):
        if key in body:
            issue[key] = body[key]
    if "labels" in body:
        issue["labels"] = [label_json(n if isinstance(n, str) else n["name"]) for n in body["labels"]]
    if body.get("state") == "closed":
        issue["closed_at"] = now_iso()
        issue.setdefault("state_reason", None)
        issue["state_reason"] = body.get("state_reason") or issue["state_reason"] or "completed"
    elif body.get("state") == "open":
        issue["closed_at"] = None
    issue["updated_at"] = now_iso()
    return JSONResponse(issue)


def list_comments(request: Request, repo: RepoState, body: Any) -> Response:
    if _issue(request, repo) is None:
        return not_found()
    items = repo.comments.get(_p(request, "number"), [])
    since = request.query_params.get("since")
    if since:
        items = [c for c in items if c["updated_at"] >= since]
    page, headers = paginate(request, items)
    return JSONResponse(page, headers=headers)


def create_comment(request: Request, repo: RepoState, body: Any) -> Response:
    issue = _issue(request, repo)
    if issue is None:
        return not_found()
    if not body or not isinstance(body.get("body"), str):
        return error(422, "Validation Failed")
    comment = request.app.state.fake.add_comment(
        repo.full_name, issue["number"], body["body"], user=author(request), author_association="NONE")
    return JSONResponse(comment, status_code=201)


def _find_comment(repo: RepoState, cid: int) -> dict | None:
    for comments in repo.comments.values():
        for comment in comments:
            if comment["id"] == cid:
                return comment
    return None


def get_comment(request: Request, repo: RepoState, body: Any) -> Response:
    comment = _find_comment(repo, _p(request, "cid"))
    return JSONResponse(comment) if comment else not_found()


def update_comment(request: Request, repo: RepoState, body: Any) -> Response:
    comment = _find_comment(repo, _p(request, "cid"))
    if comment is None:
        return not_found()
    if not body or not isinstance(body.get("body"), str):
        return error(422, "Validation Failed")
    comment["body"] = body["body"]
    comment["updated_at"] = now_iso()
    return JSONResponse(comment)


def list_labels(request: Request, repo: RepoState, body: Any) -> Response:
    issue = _issue(request, repo)
    return JSONResponse(issue["labels"]) if issue else not_found()


def add_labels(request: Request, repo: RepoState, body: Any) -> Response:
    issue = _issue(request, repo)
    if issue is None:
        return not_found()
    names = body.get("labels") if isinstance(body, dict) else body
    if not isinstance(names, list):
        return error(422, "Validation Failed")
    names = [n if isinstance(n, str) else n.get("name") for n in names]
    present = {label["name"] for label in issue["labels"]}
    issue["labels"] += [label_json(n) for n in dict.fromkeys(names) if n not in present]
    return JSONResponse(issue["labels"])


def remove_label(request: Request, repo: RepoState, body: Any) -> Response:
    issue = _issue(request, repo)
    if issue is None:
        return not_found()
    name = _p(request, "name")
    if name not in {label["name"] for label in issue["labels"]}:
        return error(404, "Label does not exist")
    issue["labels"] = [label for label in issue["labels"] if label["name"] != name]
    return JSONResponse(issue["labels"])


def get_permission(request: Request, repo: RepoState, body: Any) -> Response:
    """GitHub's answer: `permission` is the legacy level (triage reads as "read"),
    `role_name` the role; a non-collaborator has "read" of a public repository, "none" of a private one."""
    login = _p(request, "user")
    outsider = "none" if repo.private else "read"  # a private repository shows strangers nothing
    role = repo.roles.get(login.lower(), "write" if login.lower() in repo.collaborators else outsider)
    legacy = {"maintain": "write", "triage": "read"}.get(role, role)
    return JSONResponse({"permission": legacy, "role_name": role, "user": {"login": login}})


def check_collaborator(request: Request, repo: RepoState, body: Any) -> Response:
    if _p(request, "user").lower() in repo.collaborators:
        return Response(status_code=204)
    return not_found()


# -- actions ------------------------------------------------------------------------------
def _attempt(request: Request, repo: RepoState) -> tuple[int, int] | None:
    run_id = _p(request, "run")
    if run_id not in repo.runs:
        return None
    attempt = request.path_params.get("attempt", repo.runs[run_id]["run_attempt"])
    return (run_id, attempt) if (run_id, attempt) in repo.run_attempts else None


def get_run(request: Request, repo: RepoState, body: Any) -> Response:
    key = _attempt(request, repo)
    return JSONResponse(repo.run_attempts[key]) if key else not_found()


def list_jobs(request: Request, repo: RepoState, body: Any) -> Response:
    key = _attempt(request, repo)
    if key is None:
        return not_found()
    if "attempt" not in request.path_params and request.query_params.get("filter") == "all":
        jobs = [j for (rid, _), js in sorted(repo.jobs.items()) if rid == key[0] for j in js]
    else:
        jobs = repo.jobs.get(key, [])
    page, headers = paginate(request, jobs)
    return JSONResponse({"total_count": len(jobs), "jobs": page}, headers=headers)


def run_logs(fake: "FakeGitHub"):
    def handler(request: Request, repo: RepoState, body: Any) -> Response:
        key = _attempt(request, repo)
        if key is None or key not in repo.logs:
            return not_found()
        blob = secrets.token_urlsafe(16)
        fake.blobs[blob] = repo.logs[key]
        location = str(request.base_url).rstrip("/") + f"/_blobs/{blob}?sig={secrets.token_hex(8)}"
        return RedirectResponse(location, status_code=302)
    return handler


def get_blob(fake: "FakeGitHub"):
    def handler(request: Request, repo: None, body: Any) -> Response:
        if "authorization" in request.headers:
            return Response(b"<Error>Authorization header not allowed with a signed URL</Error>",
                            status_code=400, media_type="application/xml")
        data = fake.blobs.pop(request.path_params["key"], None)  # short-lived: one use
        if data is None:
            return Response(b"<Error>BlobNotFound</Error>", 404, media_type="application/xml")
        return Response(data, media_type="application/zip")
    return handler


def list_writes(fake: "FakeGitHub"):
    def handler(request: Request, repo: None, body: Any) -> Response:
        return JSONResponse([w.__dict__ for w in fake.writes])
    return handler


# -- pulls --------------------------------------------------------------------------------
def _head_label(repo: RepoState, head: str) -> str:
    return head if ":" in head else f"{repo.full_name.split('/')[0]}:{head}"


def list_pulls(request: Request, repo: RepoState, body: Any) -> Response:
    q = request.query_params
    pulls = sorted(repo.pulls.values(), key=lambda p: -p["number"])
    state = q.get("state", "open")
    pulls = [p for p in pulls if state == "all" or p["state"] == state]
    if q.get("head"):
        pulls = [p for p in pulls if p["head"]["label"].lower() == _head_label(repo, q["head"]).lower()]
    if q.get("base"):
        pulls = [p for p in pulls if p["base"]["ref"] == q["base"]]
    page, headers = paginate(request, pulls)
    return JSONResponse(page, headers=headers)


def create_pull(request: Request, repo: RepoState, body: Any) -> Response:
    if not body or not body.get("head") or not body.get("base") or not body.get("title"):
        return error(422, "Validation Failed")
    label = _head_label(repo, body["head"])
    for pr in repo.pulls.values():
        if pr["state"] == "open" and pr["head"]["label"] == label and pr["base"]["ref"] == body["base"]:
            return error(422, "Validation Failed", errors=[{
                "resource": "PullRequest", "code": "custom",
                "message": f"A pull request already exists for {label}."}])
    pr = request.app.state.fake.add_pull(
        repo.full_name, label, body["base"], title=body["title"], body=body.get("body") or "",
        draft=bool(body.get("draft", False)), user=author(request))
    return JSONResponse(pr, status_code=201)


def get_pull(request: Request, repo: RepoState, body: Any) -> Response:
    pr = repo.pulls.get(_p(request, "number"))
    return JSONResponse(pr) if pr else not_found()


def update_pull(request: Request, repo: RepoState, body: Any) -> Response:
    pr = repo.pulls.get(_p(request, "number"))
    if pr is None:
        return not_found()
    for key in ("title", "body", "state"):
        if key in (body or {}):
            pr[key] = body[key]
    if "base" in (body or {}):
        pr["base"]["ref"] = body["base"]
    pr["updated_at"] = now_iso()
    twin = repo.issues.get(pr["number"])  # the PR's issue side shows the same state
    if twin is not None and "state" in (body or {}):
        twin.update(state=pr["state"], closed_at=now_iso() if pr["state"] == "closed" else None)
        pr["closed_at"] = twin["closed_at"]
    return JSONResponse(pr)
