"""A local fake of the GitHub REST API, served over real HTTP on 127.0.0.1.

`FakeGitHub` keeps repositories, issues, comments, collaborators, workflow runs (jobs and log
archives per attempt) and pull requests in memory, speaks the REST shapes the `GitHubPort`
needs (see `fake_github_routes.py` for the endpoints), and records every write to a
repository in `writes` as `Write(method, path, json, status)`, refused ones included (App token
requests are not writes; every request, with the kind of credential it carried, is in
`requests`). `inject_failure(...)` makes the next matching requests fail.

In a test::

    with FakeGitHub() as gh:                       # or the `fake_github` fixture
        gh.add_issue("o/r", 1, title="crash", body="...")
        client = GitHubClient(token="t", base_url=gh.url)
        ...
        assert [w.path for w in gh.writes_to("POST", "/comments")] == [...]

From another process: `python -m tests.fakes.fake_github --port 8999 --state seed.json`
(seed file: `{"issues": [{"repo": "o/r", "number": 1, ...}], "comments": [...], ...}`, each item
the keyword arguments of the matching `add_*` method); `GET /_fake/writes` then lists writes.
"""

from __future__ import annotations

import argparse
import json
import secrets
import subprocess
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

import pytest

from tests.fakes.fake_github_state import FakeGitHubState

__all__ = ["FakeGitHub", "Write", "RequestRecord", "fake_github"]


@dataclass(frozen=True)
class Write:
    """One mutating request as the fake received it (path has no host, no query)."""

    method: str
    path: str
    json: Any
    status: int = 200


@dataclass(frozen=True)
class RequestRecord:
    """Any request: method, path, and the kind of credential it carried."""

    method: str
    path: str
    auth: str  # "none" | "jwt" | "token" | "installation" | "basic"


@dataclass(eq=False)
class FakeGitHub(FakeGitHubState):
    """The fake server: seeding helpers (from `FakeGitHubState`) plus its HTTP lifecycle.

    token: when set, only this token (or an installation token the fake issued) is accepted.
    app_id / app_public_key: when set, App JWTs must carry `iss == app_id` / verify with the key.
    require_auth: refuse requests to /repos/... without credentials (401), like a private repo.
    user_login: who a plain token belongs to (`GET /user`, author of its comments); writes made
    with an installation token are authored by `scrubbot[bot]`.
    """

    token: str | None = None
    app_id: str | int | None = None
    app_public_key: str | bytes | None = None
    require_auth: bool = True
    user_login: str = "scrubbot-user"
    # OAuth web flow (fake_github_oauth.py): who "signs in" at /login/oauth/authorize, and the
    # OAuth App's credentials (None: any client id / secret is accepted).
    oauth_login: str = "octocat"
    oauth_client_id: str | None = None
    oauth_client_secret: str | None = None
    host: str = "127.0.0.1"
    port: int = 0
    writes: list[Write] = field(default_factory=list)
    requests: list[RequestRecord] = field(default_factory=list)
    git_dirs: dict[str, Path] = field(default_factory=dict)  # "owner/name" -> bare repo served over HTTP

    def __post_init__(self) -> None:
        super().__post_init__()
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self._failures: list[list[Any]] = []
        self.oauth_codes: dict[str, str] = {}  # code -> login
        self.oauth_tokens: dict[str, str] = {}  # user token -> login
        self.manifest_codes: dict[str, dict] = {}  # App manifest flow: code -> manifest (fake_github_manifest.py)
        self.created_manifest: dict | None = None
        self.hook_deliveries: list[dict] = []  # what GET /app/hook/deliveries lists

    def __repr__(self) -> str:
        where = self.url if self.port else "not started"
        return f"FakeGitHub({where}, repos={sorted(self.repos)}, writes={len(self.writes)})"

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """Base URL of the REST API (set SCRUB_GITHUB_API_URL to this)."""
        if not self.port:
            raise RuntimeError("FakeGitHub is not started")
        return f"http://{self.host}:{self.port}"

    def start(self) -> "FakeGitHub":
        """Serve in a daemon thread; returns once the server accepts connections."""
        import uvicorn

        from tests.fakes.fake_github_routes import build_app

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        self._socket = sock
        config = uvicorn.Config(
            build_app(self), log_level="warning", lifespan="off", access_log=False
        )
        self._server = uvicorn.Server(config)
        self._server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="fake-github", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("fake GitHub server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._socket is not None:
            self._socket.close()
        self._server = self._thread = self._socket = None

    def __enter__(self) -> "FakeGitHub":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what happened ---------------------------------------------------------------------
    def record_write(self, method: str, path: str, body: Any, status: int = 200) -> None:
        with self.lock:
            self.writes.append(Write(method, path, body, status))

    def writes_to(self, method: str | None = None, path_contains: str = "") -> list[Write]:
        """Writes filtered by HTTP method and a substring of the path, in order."""
        with self.lock:
            return [
                w
                for w in self.writes
                if (method is None or w.method == method.upper()) and path_contains in w.path
            ]

    def clear_writes(self) -> None:
        with self.lock:
            self.writes.clear()
            self.requests.clear()

    def inject_failure(self, method: str, path_contains: str, status: int = 502,
                       times: int = 1, message: str = "Server Error", after_write: bool = False) -> None:
        """Answer the next `times` matching requests with `status` (before auth or lookup).
        `after_write=True`: perform the request first, then answer `status` anyway (a proxy
        that timed out on a write GitHub did make: the ambiguous 502)."""
        with self.lock:
            self._failures.append([method.upper(), path_contains, status, times, message, after_write])

    def take_failure(self, method: str, path: str, after_write: bool = False) -> Any:
        """The injected error response for this request, if one is pending (used by routes)."""
        from tests.fakes.fake_github_routes import error

        with self.lock:
            for failure in self._failures:
                if failure[0] == method and failure[1] in path and failure[3] > 0 and failure[5] == after_write:
                    failure[3] -= 1
                    return error(failure[2], failure[4])
        return None

    def serve_git(self, repo: str, bare: Path) -> str:
        """Serve the bare repository `bare` as `<url>/<repo>.git` (see fake_git_http.py)."""
        subprocess.run(["git", "config", "http.receivepack", "true"], cwd=bare, check=True)
        self.git_dirs[repo.lower()] = Path(bare)
        return f"{self.url}/{repo}.git"

    def new_installation_token(self, installation_id: int, repositories: list[str] | None = None,
                               permissions: dict[str, str] | None = None) -> str:
        """A token of the installation; `repositories`/`permissions` narrow it (see `may`)."""
        token = "ghs_" + secrets.token_hex(18)
        with self.lock:
            self.installation_tokens[token] = installation_id
            self.token_scopes[token] = (None if repositories is None else {r.lower() for r in repositories},
                                        dict(permissions or {}))
        return token

    def may(self, token: str, repo: str, permission: str, write: bool) -> str | None:
        """Why an installation `token` may not use `permission` on `repo` (None: it may): a
        repository outside its selection is "not found", a missing permission "forbidden"."""
        names, granted = self.token_scopes.get(token, (None, {}))
        if names is not None and repo.split("/")[-1].lower() not in names:
            return "not found"
        if granted and granted.get(permission) not in (("write",) if write else ("read", "write")):
            return "forbidden"
        return None


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    """A started `FakeGitHub` accepting any token. Use it from a conftest with
    `from tests.fakes.fake_github import fake_github  # noqa: F401`."""
    with FakeGitHub() as fake:
        yield fake


def _seed_from_file(fake: FakeGitHub, path: Path) -> None:
    """Apply a JSON seed file: keys are `repos`, `issues`, `comments`, `collaborators`,
    `workflow_runs`, `pulls`; each a list of keyword-argument objects for the `add_*` method.
    A `logs_zip_path` in a workflow run is read from disk as its `logs_zip`."""
    data = json.loads(path.read_text())
    adders = {
        "repos": fake.add_repo,
        "issues": fake.add_issue,
        "comments": fake.add_comment,
        "collaborators": fake.add_collaborator,
        "workflow_runs": fake.add_workflow_run,
        "pulls": fake.add_pull,
    }
    for key, adder in adders.items():
        for kwargs in data.get(key, []):
            kwargs = dict(kwargs)
            if "logs_zip_path" in kwargs:
                kwargs["logs_zip"] = Path(kwargs.pop("logs_zip_path")).read_bytes()
            adder(**kwargs)


def main(argv: Iterable[str] | None = None) -> None:
    """`python -m tests.fakes.fake_github --port N [--state seed.json] [--token T]`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--state", type=Path)
    parser.add_argument("--token")
    parser.add_argument("--app-id")
    args = parser.parse_args(list(argv) if argv is not None else None)
    fake = FakeGitHub(token=args.token, app_id=args.app_id, port=args.port)
    if args.state:
        _seed_from_file(fake, args.state)
    fake.start()
    print(fake.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":
    main()
