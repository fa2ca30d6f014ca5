"""Credentials for the REST client: a plain token, or a GitHub App acting as an installation.

`GitHubAuth` builds githubkit `GitHub` objects (sync, no HTTP cache: idempotency checks must
see fresh data) and mints installation tokens for git. Tokens and keys never appear in a repr.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

from githubkit import AppAuthStrategy, GitHub, TokenAuthStrategy, UnauthAuthStrategy
from githubkit.cache import MemCacheStrategy
from githubkit.exception import GitHubException, RequestFailed
from githubkit.retry import RETRY_DEFAULT, RETRY_RATE_LIMIT, RetryOption

DEFAULT_API_URL = "https://api.github.com"
USER_AGENT = "scrubbot"


SAFE_TO_RESEND = frozenset({"GET", "HEAD", "OPTIONS"})


def reads_only_retry(exc: GitHubException, retry_count: int) -> RetryOption:
    """githubkit's retry decision, made safe for writes.

    A rate-limited request was not performed, so it is retried whatever its method. A 5xx on a
    GET is retried (1/4/9 s). A 5xx on a POST/PATCH/PUT/DELETE is NOT: GitHub may have done
    the write and lost the answer (a 502 from its proxy), and sending it again posts a second
    comment. The caller sees the error; the task retries the whole idempotent upsert, which
    finds what the first attempt wrote.
    """
    method = exc.request.method.upper() if isinstance(exc, RequestFailed) else ""
    if method in SAFE_TO_RESEND:
        return RETRY_DEFAULT(exc, retry_count)
    return RETRY_RATE_LIMIT(exc, retry_count)


def web_host(api_url: str) -> tuple[str, str]:
    """(scheme, host) of the git/web server behind a REST base URL.

    https://api.github.com -> github.com; https://ghe.example/api/v3 -> ghe.example; a local
    fake (http://127.0.0.1:8080) -> itself.
    """
    parts = urlsplit(api_url)
    host = parts.netloc
    if host.startswith("api."):
        host = host[len("api."):]
    return parts.scheme or "https", host


class GitHubAuth:
    """Token mode (`token`), App mode (`app_id` + `private_key` [+ `installation_id`]), or, with
    `anonymous=True` and no credentials, anonymous reads of public repositories (the CLI)."""

    def __init__(
        self,
        *,
        token: str | None = None,
        app_id: str | int | None = None,
        private_key: str | None = None,
        installation_id: int | None = None,
        base_url: str = DEFAULT_API_URL,
        timeout: float = 30.0,
        auto_retry: bool = True,
        anonymous: bool = False,
    ) -> None:
        if not token and not (app_id and private_key) and not anonymous:
            raise ValueError("GitHub credentials: give a token, or an App id and private key")
        self.mode = "token" if token else "app" if (app_id and private_key) else "anonymous"
        self.base_url = base_url.rstrip("/")
        self.installation_id = installation_id
        self._token = token
        self._cache = MemCacheStrategy()  # per client: never share tokens across servers
        self._lock = threading.Lock()
        options = dict(base_url=self.base_url + "/", timeout=timeout, http_cache=False,
                       cache_strategy=self._cache, user_agent=USER_AGENT,
                       auto_retry=reads_only_retry if auto_retry is True else auto_retry)
        if token:
            self._root = GitHub(TokenAuthStrategy(token), **options)
        elif self.mode == "anonymous":
            self._root = GitHub(UnauthAuthStrategy(), **options)
        else:
            _require_jwt()
            self._root = GitHub(AppAuthStrategy(str(app_id), read_private_key(private_key or "")),
                                **options)
        self._installations: dict[int, GitHub] = {}
        self._repo_installations: dict[str, int] = {}
        self._minted: dict[int, tuple[str, float]] = {}  # installation -> (token, expiry)

    def __repr__(self) -> str:
        return f"GitHubAuth(mode={self.mode!r}, base_url={self.base_url!r})"

    # -- githubkit clients -----------------------------------------------------------------
    @property
    def app(self) -> GitHub:
        """The client authenticating as the App itself (JWT); token mode: the token client."""
        return self._root

    def for_repo(self, repo: str) -> GitHub:
        """The client that may act on `owner/name`."""
        if self.mode in ("token", "anonymous"):
            return self._root
        return self.for_installation(self.installation_for(repo))

    def for_installation(self, installation_id: int) -> GitHub:
        with self._lock:
            if installation_id not in self._installations:
                strategy = self._root.auth.as_installation(installation_id)  # type: ignore[union-attr]
                self._installations[installation_id] = self._root.with_auth(strategy)
            return self._installations[installation_id]

    def installation_for(self, repo: str) -> int:
        """The installation id: the configured one, else looked up once per repository."""
        if self.installation_id is not None:
            return self.installation_id
        key = repo.lower()
        if key not in self._repo_installations:
            owner, name = split_repo(repo)
            data = self._root.rest.apps.get_repo_installation(owner, name).json()
            self._repo_installations[key] = int(data["id"])
        return self._repo_installations[key]

    @staticmethod
    def without_redirects(gh: GitHub) -> GitHub:
        """The same credentials (and token cache), but 3xx answers are returned, not followed."""
        return GitHub(gh.auth, config=dataclasses.replace(gh.config, follow_redirects=False))

    # -- tokens for git ----------------------------------------------------------------------
    def git_token(self, repo: str) -> str:
        """The user token, or an installation token (minted, reused until 5 minutes before expiry)."""
        if self._token:
            return self._token
        iid = self.installation_for(repo)
        with self._lock:
            cached = self._minted.get(iid)
            if cached and cached[1] - 300 > time.time():
                return cached[0]
        data = self._root.rest.apps.create_installation_access_token(iid).json()
        expires = datetime.strptime(data["expires_at"], "%Y-%m-%dT%H:%M:%S%z").timestamp()
        with self._lock:
            self._minted[iid] = (data["token"], expires)
        return data["token"]

    def clone_url(self, repo: str) -> str:
        scheme, host = web_host(self.base_url)
        return f"{scheme}://x-access-token:{self.git_token(repo)}@{host}/{repo}.git"

    def read_token(self, repo: str) -> str | None:
        """App mode: a fresh installation token for `repo` alone, `contents: read` alone (an
        hour long, never cached). Token and anonymous mode: None, a personal token cannot be
        narrowed, so it is never handed on."""
        if self.mode != "app":
            return None
        owner, name = split_repo(repo)
        data = self._root.rest.apps.create_installation_access_token(
            self.installation_for(repo), data={"repositories": [name], "permissions": {"contents": "read"}}).json()
        return str(data["token"])

    def read_clone_url(self, repo: str) -> str:
        """A URL that can fetch `repo` and nothing else (`read_token`), or, without one, the
        anonymous URL (public repositories only)."""
        scheme, host = web_host(self.base_url)
        token = self.read_token(repo)
        credentials = f"x-access-token:{token}@" if token else ""
        return f"{scheme}://{credentials}{host}/{repo}.git"


def _require_jwt() -> None:
    try:
        import jwt  # noqa: F401  (githubkit signs the App JWT with PyJWT)
    except ImportError:
        raise RuntimeError("GitHub App mode needs PyJWT: install githubkit[auth-app]") from None


def read_private_key(value: str) -> str:
    """The PEM text of `SCRUB_GITHUB_PRIVATE_KEY`: given inline (real or `\\n`-escaped
    newlines, as one-line env files have them) or as the path of a .pem file."""
    value = value.strip()
    if "-----BEGIN" not in value:
        path = Path(value).expanduser()
        try:
            readable = path.is_file()
        except OSError:  # e.g. a name too long to be a path
            readable = False
        if not readable:
            raise ValueError("SCRUB_GITHUB_PRIVATE_KEY is neither a PEM key nor a readable file")
        value = path.read_text().strip()
    return value.replace("\\n", "\n") + "\n"


def split_repo(repo: str) -> tuple[str, str]:
    owner, sep, name = repo.partition("/")
    if not sep or not owner or not name or "/" in name:
        raise ValueError(f"repository must be 'owner/name', got {repo!r}")
    return owner, name
