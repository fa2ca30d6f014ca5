"""HTTP routes of the fake GitHub (Starlette), over a `FakeGitHub`'s state.

Behaves like github.com where Scrubbot can tell: 404 `{"message": "Not Found"}` for unknown
things, 401 without or with bad credentials, App JWTs only on /app/... and
/repos/{o}/{r}/installation, installation tokens only for their installation's repos (and, when
narrowed, only for their repositories and permissions: 404 / 403), `Link`
pagination (30 per page by default, at most 100), 204/404 for collaborator checks, 422 for a
second open PR from the same head, and run logs as a 302 to a short-lived `/_blobs/...` URL
that refuses requests carrying an Authorization header (as signed blob URLs do).
"""

from __future__ import annotations

import base64
import json
import time
from typing import TYPE_CHECKING, Any, Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.fakes.fake_github_state import RepoState

if TYPE_CHECKING:
    from tests.fakes.fake_github import FakeGitHub

Handler = Callable[[Request, Any, Any], Response]
WRITE_METHODS = {"POST", "PATCH", "PUT", "DELETE"}


def error(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"message": message, "documentation_url": "https://docs.github.com/rest",
                         "status": str(status), **extra}, status_code=status)


def not_found() -> JSONResponse:
    return error(404, "Not Found")


def _b64json(segment: str) -> Any:
    return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))


def verify_jwt(fake: "FakeGitHub", raw: str) -> str | None:
    """None when `raw` is an acceptable App JWT, else why not."""
    try:
        head_b64, body_b64, sig_b64 = raw.split(".")
        header, claims = _b64json(head_b64), _b64json(body_b64)
    except Exception:
        return "A JSON web token could not be decoded"
    if header.get("alg") != "RS256":
        return "JWT must be signed with RS256"
    now = time.time()
    if not isinstance(claims.get("exp"), int) or claims["exp"] < now:
        return "'Expiration time' claim ('exp') is missing or in the past"
    if not isinstance(claims.get("iat"), int) or claims["iat"] > now + 60:
        return "'Issued at' claim ('iat') is missing or in the future"
    if fake.app_id is not None and str(claims.get("iss")) != str(fake.app_id):
        return "'Issuer' claim ('iss') does not match the app"
    if fake.app_public_key is not None:
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding

        key = fake.app_public_key
        public = serialization.load_pem_public_key(key.encode() if isinstance(key, str) else key)
        try:
            signature = base64.urlsafe_b64decode(sig_b64 + "=" * (-len(sig_b64) % 4))
            public.verify(signature, f"{head_b64}.{body_b64}".encode(),  # type: ignore[union-attr]
                          padding.PKCS1v15(), hashes.SHA256())  # type: ignore[call-arg]
        except Exception:
            return "JWT signature does not verify"
    return None


def _credential(request: Request) -> tuple[str, str]:
    """(kind, value) of the Authorization header: kind none|jwt|token|basic."""
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    scheme, value = scheme.lower(), value.strip()
    if not header:
        return "none", ""
    if scheme == "basic":
        return "basic", value
    if scheme == "bearer" and value.count(".") == 2:
        return "jwt", value
    if scheme in ("token", "bearer") and value:
        return "token", value
    return "none", ""


def route(fake: "FakeGitHub", path: str, method: str, handler: Handler, auth: str = "repo") -> Route:
    """Wrap `handler(request, repo, body)` with request logging, auth, repo lookup, writes log.

    auth: "repo" (user/installation token), "app" (JWT), "app-repo" (JWT, repo looked up),
    "none" (blobs, control endpoints).
    """

    async def endpoint(request: Request) -> Response:
        kind, value = _credential(request)
        if kind == "token" and value in fake.installation_tokens:
            kind = "installation"
        fake.requests.append(_record(request.method, request.url.path, kind))
        request.state.auth_kind = kind
        body: Any = None
        response: Response | None = None
        if request.method in WRITE_METHODS:
            raw = await request.body()
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                response = error(400, "Problems parsing JSON")
        response = response or fake.take_failure(request.method, request.url.path)
        response = response or _authorize(fake, request, auth, kind, value)
        repo: RepoState | None = None
        if response is None and "owner" in request.path_params:
            full = f"{request.path_params['owner']}/{request.path_params['repo']}"
            repo = fake.get_repo(full)
            if repo is None:
                response = not_found()
            elif kind == "installation" and fake.installation_tokens[value] != repo.installation_id:
                response = not_found()
            elif kind == "installation" and (why := fake.may(value, repo.full_name, _permission(request.url.path),
                                                              write=request.method in WRITE_METHODS)):
                response = not_found() if why == "not found" else error(403, "Resource not accessible by integration")
        if response is None:
            with fake.lock:
                response = handler(request, repo, body)
        if request.method in WRITE_METHODS and auth == "repo":
            fake.record_write(request.method, request.url.path, body, response.status_code)
        if response.status_code < 400:  # done; maybe answer as if it had failed
            response = fake.take_failure(request.method, request.url.path, after_write=True) or response
        return response

    return Route(path, endpoint, methods=[method])


def _permission(path: str) -> str:
    """The App permission a REST path needs (enough for narrowed tokens: `FakeGitHub.may`)."""
    for part, permission in (("/issues", "issues"), ("/labels", "issues"), ("/pulls", "pull_requests"),
                             ("/actions", "actions")):
        if part in path:
            return permission
    return "contents"


def _record(method: str, path: str, kind: str) -> Any:
    from tests.fakes.fake_github import RequestRecord

    return RequestRecord(method, path, kind)


def _authorize(fake: "FakeGitHub", request: Request, auth: str, kind: str, value: str) -> Response | None:
    if auth == "none":
        return None
    if auth in ("app", "app-repo"):
        if kind != "jwt":
            return error(401, "A JSON web token could not be decoded")
        reason = verify_jwt(fake, value)
        return error(401, reason) if reason else None
    if kind == "jwt":
        return error(401, "A JSON web token cannot be used on this endpoint; use an installation token")
    if kind == "none":
        return error(401, "Requires authentication") if fake.require_auth else None
    if kind == "token" and fake.token is not None and value != fake.token:
        return error(401, "Bad credentials")
    if kind == "basic":
        return error(401, "Bad credentials")
    return None


def paginate(request: Request, items: list[Any]) -> tuple[list[Any], dict[str, str]]:
    """One page of `items` per `page`/`per_page`, and a GitHub-style `Link` header."""
    per_page = max(1, min(100, int(request.query_params.get("per_page", 30))))
    page = max(1, int(request.query_params.get("page", 1)))
    last = max(1, -(-len(items) // per_page))
    links = []
    if page < last:
        links.append(f'<{request.url.include_query_params(page=page + 1)}>; rel="next"')
        links.append(f'<{request.url.include_query_params(page=last)}>; rel="last"')
    if page > 1:
        links.append(f'<{request.url.include_query_params(page=1)}>; rel="first"')
        links.append(f'<{request.url.include_query_params(page=page - 1)}>; rel="prev"')
    headers = {"Link": ", ".join(links)} if links else {}
    return items[(page - 1) * per_page: page * per_page], headers


def build_app(fake: "FakeGitHub") -> Starlette:
    from tests.fakes import fake_github_handlers as h
    from tests.fakes.fake_git_http import git_route

    R = "/repos/{owner}/{repo}"
    routes = [
        route(fake, "/app", "GET", h.get_app, auth="app"),
        route(fake, "/app/installations", "GET", h.list_installations(fake), auth="app"),
        route(fake, "/app/hook/deliveries", "GET", h.list_deliveries(fake), auth="app"),
        route(fake, "/app/installations/{iid:int}/access_tokens", "POST", h.create_token(fake), auth="app"),
        route(fake, R + "/installation", "GET", h.get_installation, auth="app-repo"),
        route(fake, "/user", "GET", h.get_user),
        route(fake, R, "GET", h.get_repo),
        route(fake, R + "/issues/{number:int}", "GET", h.get_issue),
        route(fake, R + "/issues/{number:int}", "PATCH", h.update_issue),
        route(fake, R + "/issues/{number:int}/comments", "GET", h.list_comments),
        route(fake, R + "/issues/{number:int}/comments", "POST", h.create_comment),
        route(fake, R + "/issues/comments/{cid:int}", "GET", h.get_comment),
        route(fake, R + "/issues/comments/{cid:int}", "PATCH", h.update_comment),
        route(fake, R + "/issues/{number:int}/labels", "GET", h.list_labels),
        route(fake, R + "/issues/{number:int}/labels", "POST", h.add_labels),
        route(fake, R + "/issues/{number:int}/labels/{name:path}", "DELETE", h.remove_label),
        route(fake, R + "/collaborators/{user}", "GET", h.check_collaborator),
        route(fake, R + "/collaborators/{user}/permission", "GET", h.get_permission),
        route(fake, R + "/actions/runs/{run:int}", "GET", h.get_run),
        route(fake, R + "/actions/runs/{run:int}/attempts/{attempt:int}", "GET", h.get_run),
        route(fake, R + "/actions/runs/{run:int}/jobs", "GET", h.list_jobs),
        route(fake, R + "/actions/runs/{run:int}/attempts/{attempt:int}/jobs", "GET", h.list_jobs),
        route(fake, R + "/actions/runs/{run:int}/logs", "GET", h.run_logs(fake)),
        route(fake, R + "/actions/runs/{run:int}/attempts/{attempt:int}/logs", "GET", h.run_logs(fake)),
        route(fake, R + "/pulls", "GET", h.list_pulls),
        route(fake, R + "/pulls", "POST", h.create_pull),
        route(fake, R + "/pulls/{number:int}", "GET", h.get_pull),
        route(fake, R + "/pulls/{number:int}", "PATCH", h.update_pull),
        route(fake, "/_blobs/{key}", "GET", h.get_blob(fake), auth="none"),
        route(fake, "/_fake/writes", "GET", h.list_writes(fake), auth="none"),
        git_route(fake),
    ]
    from tests.fakes.fake_github_ci import ci_routes
    from tests.fakes.fake_github_commits import commit_routes
    from tests.fakes.fake_github_manifest import manifest_routes
    from tests.fakes.fake_github_oauth import oauth_routes

    app = Starlette(routes=routes + ci_routes(fake) + commit_routes(fake) + oauth_routes(fake) + manifest_routes(fake))
    app.state.fake = fake
    return app

