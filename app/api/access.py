"""Who is asking, and what they may do with a run.

A request comes from one of:

- a script with `Authorization: Bearer <token>` (one of `SCRUB_API_TOKENS`, compared as
  SHA-256 digests in constant time): an operator, may read and act on every run;
- a person signed in with GitHub (the session cookie, see `app.api.login`): may read a run of a
  public repository (or any, when `SCRUB_PUBLIC_READ` is on and the repository is public), a run
  of a private one with read permission, and approve / retry / cancel with write permission on
  the run's repository, asked of GitHub with the App's credentials
  (`GET /repos/{o}/{r}/collaborators/{user}/permission`), cached for a minute;
- anyone else: anonymous; reads runs of public repositories when `SCRUB_PUBLIC_READ` is on.

Without OAuth configured the service is in local mode: `scrub serve` listens on loopback only,
and, as Jupyter does, prints a sign-in URL carrying a secret token (`SCRUB_LOCAL_TOKEN`, random
per start when unset). Opening it (`/login?token=...`) signs the browser in as the local user
(a session cookie); a script sends `Authorization: Bearer <token>`. Whoever else reaches the
port (another account on a shared machine, a page rebinding its DNS name to 127.0.0.1) is
anonymous: no action, no run of a private repository. Any doubt (GitHub unreachable, not
configured) refuses: a repository whose visibility is unknown counts as private.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from fastapi import HTTPException, Request

from app.db.models import Run
from app.settings import Settings

log = logging.getLogger(__name__)
PERMISSION_TTL_S = 60.0
VISIBILITY_TTL_S = 300.0
WRITE_LEVELS = frozenset({"admin", "maintain", "write"})  # role names; a custom role is refused
def _local_user() -> str:
    """Who approves in local mode: the account that runs `scrub serve` (a person, not a page)."""
    import getpass

    try:
        return f"{getpass.getuser()} (local mode)"
    except (KeyError, OSError):  # no name for this uid (a container's arbitrary uid)
        return "the local user (local mode)"


LOCAL_USER = _local_user()  # how local mode signs what it does (`approved_by`)
LOCAL_SESSION_KEY = "local"  # in the session cookie of a browser that opened the sign-in URL


@dataclass(frozen=True)
class Viewer:
    login: str | None  # None: anonymous
    via: str  # "session", "token", "local" or "anonymous"

    @property
    def trusted(self) -> bool:
        """An operator: a bearer token, or the local user of a loopback-only local server."""
        return self.via in ("token", "local")

    @property
    def signed_in(self) -> bool:
        return self.login is not None


ANONYMOUS = Viewer(None, "anonymous")


def token_digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class People:
    """Identifies viewers and answers permission questions for one app (one settings)."""

    def __init__(self, settings: Settings, github_for: Callable[[int | None], Any] | None = None,
                 local_token: str | None = None) -> None:
        self.settings = settings
        self.local = not settings.oauth_configured
        self._tokens = [token_digest(t.strip()) for t in settings.api_tokens.split(",") if t.strip()]
        # Local mode's secret: the one given (`scrub serve` prints it), the setting, or random.
        self.local_token = (local_token or settings.local_token.strip() or secrets.token_urlsafe(32)) if self.local else ""
        self._local_digest = token_digest(self.local_token) if self.local else b""
        self._github_for = github_for
        self._clients: dict[int | None, Any] = {}
        self._cache: dict[tuple[str, ...], tuple[float, Any]] = {}
        self._lock = threading.Lock()

    # -- who -----------------------------------------------------------------------------------
    def viewer(self, request: Request) -> Viewer:
        header = request.headers.get("authorization", "")
        if header:
            scheme, _, value = header.partition(" ")
            if scheme.lower() == "bearer" and self.local_token_ok(value.strip()):
                return Viewer(LOCAL_USER, "token")
            if scheme.lower() != "bearer" or not self._token_ok(value.strip()):
                raise HTTPException(401, "invalid API token", headers={"WWW-Authenticate": "Bearer"})
            return Viewer("token:" + hashlib.sha256(value.strip().encode()).hexdigest()[:8], "token")
        session = request.scope.get("session", {})
        if self.local:
            mark = str(session.get(LOCAL_SESSION_KEY, "")).encode("utf-8", "replace")
            signed_in = hmac.compare_digest(mark, self.local_session_mark.encode())
            return Viewer(LOCAL_USER, "local") if signed_in else ANONYMOUS
        login = session.get("user")
        return Viewer(login, "session") if isinstance(login, str) and login else ANONYMOUS

    def local_token_ok(self, token: str) -> bool:
        """Local mode's secret, compared in constant time (False outside local mode)."""
        return self.local and bool(token) and hmac.compare_digest(token_digest(token), self._local_digest)

    @property
    def local_session_mark(self) -> str:
        """What a signed-in local session holds: bound to this token, so a new token (a restart
        without `SCRUB_LOCAL_TOKEN`) signs every browser out."""
        return hashlib.sha256(b"scrub-local-session:" + self._local_digest).hexdigest()[:32] if self.local else ""

    def _token_ok(self, token: str) -> bool:
        digest = token_digest(token)
        ok = False
        for known in self._tokens:  # no early exit: the time does not tell which token matched
            ok |= hmac.compare_digest(digest, known)
        return ok and bool(token)

    # -- what they may do ------------------------------------------------------------------------
    def can_read(self, viewer: Viewer, run: Run) -> bool:
        if viewer.trusted:
            return True
        if not run.repo:  # a run of no repository (CLI, selftest) shows nothing private
            return self.settings.public_read or viewer.signed_in
        if self.settings.public_read and not self.is_private(run):
            return True
        return viewer.via == "session" and self.permission(run, viewer.login or "") != "none"

    def can_read_or_not(self, viewer: Viewer, run: Run) -> bool:
        """`can_read`, with "GitHub cannot say" as no (for what only names or announces runs:
        the list's filter, the live list; a page of a run still answers 503)."""
        try:
            return self.can_read(viewer, run)
        except HTTPException:
            return False

    def can_write(self, viewer: Viewer, run: Run) -> bool:
        if viewer.trusted:
            return True
        if viewer.via != "session" or not run.repo:
            return False
        return self.permission(run, viewer.login or "") in WRITE_LEVELS

    def permission(self, run: Run, login: str) -> str:
        """The signed-in person's level on the run's repository; 503 when GitHub cannot say."""
        try:
            return self._cached(("perm", run.repo.lower(), login.lower()), PERMISSION_TTL_S,
                                lambda: self._client(run).permission(run.repo, login))
        except Exception as exc:
            log.warning("permission of %s on %s unknown: %s", login, run.repo, exc)
            raise HTTPException(503, "could not check your permission on GitHub; try again later") from None

    def is_private(self, run: Run) -> bool:
        if self._github_for is None:  # no GitHub credentials: nothing is known to be public (no log line each time)
            return True
        try:
            return self._cached(("private", run.repo.lower()), VISIBILITY_TTL_S,
                                lambda: self._client(run).is_private(run.repo))
        except Exception as exc:
            log.warning("visibility of %s unknown, treated as private: %s", run.repo, exc)
            return True

    def _client(self, run: Run) -> Any:
        if self._github_for is None:
            raise RuntimeError("GitHub is not configured")
        with self._lock:
            if run.installation_id not in self._clients:
                self._clients[run.installation_id] = self._github_for(run.installation_id)
            return self._clients[run.installation_id]

    def _cached(self, key: tuple[str, ...], ttl: float, compute: Callable[[], Any]) -> Any:
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None and hit[0] > now:
            return hit[1]
        value = compute()
        with self._lock:
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[key] = (now + ttl, value)
        return value
