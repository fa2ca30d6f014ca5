"""Git's smart HTTP protocol for the fake GitHub: clone, fetch and push over real HTTP.

`FakeGitHub.serve_git("owner/name", bare_path)` makes `http://127.0.0.1:<port>/owner/name.git`
a git remote, as `https://github.com/owner/name.git` is: the same URL `GitHubPort.clone_url`
builds from `SCRUB_GITHUB_API_URL`. Requests go to `git http-backend` (git's own CGI). Like
github.com, a public repository may be fetched without credentials; a push, or any request to a
private one, without credentials is answered 401 with a Basic challenge, so git sends the token
from the URL. With `FakeGitHub.token` set, only that token (or one the fake issued) is accepted.
An installation token narrowed to some repositories or to `contents: read` is refused
elsewhere (404) and on a push (403), as GitHub refuses it.
"""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

if TYPE_CHECKING:
    from tests.fakes.fake_github import FakeGitHub


def _password(request: Request) -> str | None:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        return base64.b64decode(value).decode().partition(":")[2]
    except ValueError:
        return None


def _cgi(bare: str, request: Request, body: bytes, rest: str) -> Response:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_PROJECT_ROOT": os.path.dirname(bare),
        "GIT_HTTP_EXPORT_ALL": "1",
        "PATH_INFO": f"/{os.path.basename(bare)}/{rest}",
        "REQUEST_METHOD": request.method,
        "QUERY_STRING": request.url.query,
        "CONTENT_TYPE": request.headers.get("content-type", ""),
        "CONTENT_LENGTH": str(len(body)),
        "REMOTE_USER": "x-access-token",  # lets receive-pack (push) run
        "REMOTE_ADDR": "127.0.0.1",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    if request.headers.get("content-encoding"):
        env["HTTP_CONTENT_ENCODING"] = request.headers["content-encoding"]
    if request.headers.get("git-protocol"):
        env["GIT_PROTOCOL"] = request.headers["git-protocol"]
    done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, timeout=120)
    head, _, payload = done.stdout.partition(b"\r\n\r\n")
    status, headers = 200, {}
    for line in head.decode(errors="replace").split("\r\n"):
        name, _, value = line.partition(":")
        if name.lower() == "status":
            status = int(value.strip().split()[0])
        elif name:
            headers[name.strip()] = value.strip()
    return Response(payload, status_code=status, headers=headers)


def git_route(fake: "FakeGitHub") -> Route:
    async def endpoint(request: Request) -> Response:
        full = f"{request.path_params['owner']}/{request.path_params['repo']}".lower()
        bare = fake.git_dirs.get(full)
        password = _password(request)
        fake.requests.append(_record(request.method, request.url.path, "basic" if password else "none"))
        if bare is None:
            return Response("Repository not found.\n", status_code=404)
        rest = request.path_params["rest"]
        push = "git-receive-pack" in rest or "git-receive-pack" in request.url.query
        state = fake.get_repo(full)
        public = state is not None and not state.private
        if password is None and not (public and not push):
            return Response("Authentication required\n", status_code=401,
                            headers={"WWW-Authenticate": 'Basic realm="GitHub"'})
        issued = password in fake.installation_tokens
        if password is not None and fake.token is not None and password != fake.token and not issued:
            return Response("Authentication required\n", status_code=401,
                            headers={"WWW-Authenticate": 'Basic realm="GitHub"'})
        refused = fake.may(password, full, "contents", write=push) if issued else None
        if refused == "not found":
            return Response("Repository not found.\n", status_code=404)
        if refused:
            return Response("Write access to repository not granted.\n", status_code=403)
        body = await request.body()
        return await asyncio.to_thread(_cgi, str(bare), request, body, rest)

    return Route("/{owner}/{repo}.git/{rest:path}", endpoint, methods=["GET", "POST"])


def _record(method: str, path: str, kind: str):
    from tests.fakes.fake_github import RequestRecord

    return RequestRecord(method, path, kind)
