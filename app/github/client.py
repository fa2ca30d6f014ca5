"""`GitHubClient`: the `GitHubPort` over githubkit's REST API (sync), returning plain JSON.

Token mode (`SCRUB_GITHUB_TOKEN`) or App mode (`SCRUB_GITHUB_APP_ID` + `SCRUB_GITHUB_PRIVATE_KEY`:
a JWT for the App, then an installation token per installation, found from the repository
when no installation id is given). Base URL: `SCRUB_GITHUB_API_URL`.

Every call answers plain dicts/lists (the REST JSON, not githubkit models). A failed call
raises `GitHubAPIError` (status, message). Writes are idempotent where the port says so:
`upsert_comment` edits our comment carrying the marker, `upsert_pull` updates the open PR of
the same head, `update_labels` only removes labels that are present.
"""

from __future__ import annotations

import base64
import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator
from urllib.parse import quote

import httpx
from githubkit import GitHub
from githubkit.exception import GitHubException, RequestError, RequestFailed

from app.github.auth import DEFAULT_API_URL, GitHubAuth, split_repo
from app.github.port import ArchiveTooLarge, GitHubAPIError, Json

if TYPE_CHECKING:
    from app.settings import Settings

log = logging.getLogger(__name__)
PER_PAGE = 100
COMPARE_MAX_COMMITS = 1000  # a day of PyTorch's main branch is ~50-150 commits
LOGS_TIMEOUT = httpx.Timeout(30.0, read=120.0)


def _from_failed(exc: RequestFailed) -> GitHubAPIError:
    raw = exc.response.raw_response
    try:
        message = str(raw.json().get("message", ""))
    except Exception:
        message = raw.text[:200]
    return GitHubAPIError(raw.status_code, message, raw.request.method, raw.request.url.path)


@contextlib.contextmanager
def _api() -> Iterator[None]:
    """Turn githubkit's errors into GitHubAPIError (method, path, status: never headers or tokens)."""
    try:
        yield
    except RequestFailed as exc:
        raise _from_failed(exc) from None
    except RequestError as exc:  # e.g. the installation-token request failed inside auth
        if isinstance(exc.exc, RequestFailed):
            raise _from_failed(exc.exc) from None
        raise GitHubAPIError(0, f"no answer ({type(exc.exc).__name__})") from None
    except GitHubException as exc:
        raise GitHubAPIError(0, f"{type(exc).__name__}: {exc}") from None


class GitHubClient:
    """Implements `app.github.port.GitHubPort`.

    clone_urls: optional `{"owner/name": path_or_url}` used by `clone_url` instead of a token
    URL (tests point it at local bare repositories; a path becomes a file:// URL).
    auto_retry: githubkit's retries (rate limit once; 5xx three times with 1/4/9 s pauses, reads only:
    a write that got a 5xx may have been done, see `app.github.auth.reads_only_retry`).
    """

    def __init__(
        self,
        *,
        token: str | None = None,
        app_id: str | int | None = None,
        private_key: str | None = None,
        installation_id: int | None = None,
        base_url: str = DEFAULT_API_URL,
        clone_urls: dict[str, str | Path] | None = None,
        timeout: float = 30.0,
        auto_retry: bool = True,
        anonymous: bool = False,
    ) -> None:
        self.auth = GitHubAuth(token=token, app_id=app_id, private_key=private_key,
                               installation_id=installation_id, base_url=base_url,
                               timeout=timeout, auto_retry=auto_retry, anonymous=anonymous)
        self._clone_urls = {k.lower(): v for k, v in (clone_urls or {}).items()}
        self._logins: dict[str, str] = {}

    @classmethod
    def from_settings(
        cls, settings: "Settings", installation_id: int | None = None, **kwargs: Any
    ) -> "GitHubClient":
        """Token mode when `github_token` is set, else App mode; raises when neither is."""
        return cls(token=settings.github_token or None, app_id=settings.github_app_id or None,
                   private_key=settings.github_private_key or None,
                   installation_id=installation_id, base_url=settings.github_api_url, **kwargs)

    def __repr__(self) -> str:
        return f"GitHubClient(mode={self.auth.mode!r}, base_url={self.auth.base_url!r})"

    def _gh(self, repo: str) -> tuple[GitHub, str, str]:
        owner, name = split_repo(repo)
        with _api():
            return self.auth.for_repo(repo), owner, name

    def _all(self, call: Callable[..., Any], gh: GitHub, items: Callable[[Any], list],
             **kw: Any) -> list[Json]:
        """Every page of a list endpoint (follows `Link: rel="next"`)."""
        with _api():
            return list(gh.rest.paginate(call, map_func=lambda r: items(r.json()), per_page=PER_PAGE, **kw))

    # -- issues -----------------------------------------------------------------------------
    def get_issue(self, repo: str, number: int) -> Json:
        gh, owner, name = self._gh(repo)
        with _api():
            return gh.rest.issues.get(owner, name, number).json()

    def list_issue_comments(self, repo: str, number: int) -> list[Json]:
        gh, owner, name = self._gh(repo)
        return self._all(gh.rest.issues.list_comments, gh, list, owner=owner, repo=name,
                         issue_number=number)

    def is_collaborator(self, repo: str, username: str) -> bool:
        gh, owner, name = self._gh(repo)
        with _api():
            try:
                return gh.rest.repos.check_collaborator(owner, name, username).status_code == 204
            except RequestFailed as exc:
                if exc.response.status_code == 404:
                    return False
                raise

    def permission(self, repo: str, username: str) -> str:
        gh, owner, name = self._gh(repo)
        with _api():
            try:
                data = gh.rest.repos.get_collaborator_permission_level(owner, name, username).json()
            except RequestFailed as exc:
                if exc.response.status_code == 404:
                    return "none"
                raise
        return str(data.get("role_name") or data.get("permission") or "none")

    def is_private(self, repo: str) -> bool:
        gh, owner, name = self._gh(repo)
        with _api():
            return bool(gh.rest.repos.get(owner, name).json().get("private", True))

    def create_comment(self, repo: str, number: int, body: str) -> Json:
        gh, owner, name = self._gh(repo)
        with _api():
            return gh.rest.issues.create_comment(owner, name, number, body=body).json()

    def upsert_comment(self, repo: str, number: int, marker: str, body: str) -> Json:
        """Edit our comment that contains `marker`, or create one. The marker is appended to
        `body` when missing. Comments by other people that quote the marker are left alone."""
        if marker not in body:
            body = f"{body.rstrip()}\n\n{marker}\n"
        me = self._my_login(repo)
        for comment in self.list_issue_comments(repo, number):
            author = (comment.get("user") or {}).get("login", "")
            if marker in (comment.get("body") or "") and (me is None or author.lower() == me):
                if comment.get("body") == body:
                    return comment
                gh, owner, name = self._gh(repo)
                with _api():
                    return gh.rest.issues.update_comment(owner, name, comment["id"], body=body).json()
        return self.create_comment(repo, number, body)

    def _my_login(self, repo: str) -> str | None:
        """Lower-case login our comments are written by (`<slug>[bot]` in App mode), or None
        when GitHub will not say (then any comment with the marker counts as ours)."""
        key = "token" if self.auth.mode == "token" else "app"
        if key not in self._logins:
            try:
                if self.auth.mode == "token":
                    login = self.auth.app.rest.users.get_authenticated().json()["login"]
                else:
                    login = self.auth.app.rest.apps.get_authenticated().json()["slug"] + "[bot]"
                self._logins[key] = login.lower()
            except (GitHubException, KeyError, TypeError) as exc:
                log.warning("cannot tell our own login (%s); matching comments by marker only",
                            type(exc).__name__)
                self._logins[key] = ""
        return self._logins[key] or None

    def update_labels(self, repo: str, number: int, add: list[str], remove: list[str]) -> None:
        """One POST for all of `add` (its answer lists the labels now present), then one DELETE
        per label of `remove` that is present and not in `add`."""
        gh, owner, name = self._gh(repo)
        with _api():
            if add:
                labels = gh.rest.issues.add_labels(owner, name, number, labels=list(add)).json()
            elif remove:
                labels = gh.rest.issues.get(owner, name, number).json().get("labels", [])
            else:
                return
            present = {label["name"] for label in labels}
            for label in remove:
                if label in present and label not in add:
                    try:
                        # githubkit puts path parameters in as they are: "why?" must be quoted
                        gh.rest.issues.remove_label(owner, name, number, quote(label, safe=""))
                    except RequestFailed as exc:
                        if exc.response.status_code != 404:  # removed meanwhile: fine
                            raise

    def close_issue(self, repo: str, number: int, reason: str = "completed") -> None:
        gh, owner, name = self._gh(repo)
        with _api():
            gh.rest.issues.update(owner, name, number, state="closed", state_reason=reason)

    # -- actions ----------------------------------------------------------------------------
    def get_workflow_run(self, repo: str, run_id: int) -> Json:
        gh, owner, name = self._gh(repo)
        with _api():
            return gh.rest.actions.get_workflow_run(owner, name, run_id).json()

    def list_run_jobs(self, repo: str, run_id: int, attempt: int | None = None) -> list[Json]:
        """Jobs of `attempt`, or of the latest attempt when None."""
        gh, owner, name = self._gh(repo)
        jobs = lambda data: data["jobs"]  # noqa: E731
        if attempt is not None:
            return self._all(gh.rest.actions.list_jobs_for_workflow_run_attempt, gh, jobs,
                             owner=owner, repo=name, run_id=run_id, attempt_number=attempt)
        return self._all(gh.rest.actions.list_jobs_for_workflow_run, gh, jobs,
                         owner=owner, repo=name, run_id=run_id, filter_="latest")

    def download_run_logs(self, repo: str, run_id: int, dest: Path, attempt: int | None = None,
                          max_bytes: int | None = None) -> Path:
        """Ask for the logs (302 to a short-lived URL), then stream that URL to `dest` without
        our credentials. A server that answers 200 with the zip directly is accepted too.
        `max_bytes`: an archive past it is not kept (`ArchiveTooLarge`; nothing is left on disk)."""
        gh, owner, name = self._gh(repo)
        raw_gh = GitHubAuth.without_redirects(gh)
        with _api():
            if attempt is None:
                resp = raw_gh.rest.actions.download_workflow_run_logs(owner, name, run_id)
            else:
                resp = raw_gh.rest.actions.download_workflow_run_attempt_logs(owner, name, run_id, attempt)
        dest = Path(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not resp.is_redirect:
            if max_bytes is not None and len(resp.raw_response.content) > max_bytes:
                raise ArchiveTooLarge(max_bytes)
            dest.write_bytes(resp.raw_response.content)
            return dest
        partial = dest.with_name(dest.name + ".part")
        try:  # the signed URL is a secret of its own: it goes in no message
            with httpx.stream("GET", resp.headers["location"], follow_redirects=True,
                              timeout=LOGS_TIMEOUT) as blob:
                if blob.status_code != 200:
                    raise GitHubAPIError(blob.status_code, "log archive download failed")
                with partial.open("wb") as out:
                    for chunk in blob.iter_bytes(1 << 16):
                        out.write(chunk)
                        if max_bytes is not None and out.tell() > max_bytes:
                            raise ArchiveTooLarge(max_bytes)
        except ArchiveTooLarge:
            partial.unlink(missing_ok=True)
            raise
        except httpx.HTTPError as exc:
            partial.unlink(missing_ok=True)
            raise GitHubAPIError(0, f"log archive download failed ({type(exc).__name__})") from None
        except GitHubAPIError:
            partial.unlink(missing_ok=True)
            raise
        partial.replace(dest)
        return dest

    def list_workflow_runs(self, repo: str, branch: str, per_page: int = 30) -> list[Json]:
        """The newest completed workflow runs on `branch` (one page, newest first)."""
        gh, owner, name = self._gh(repo)
        with _api():
            data = gh.rest.actions.list_workflow_runs_for_repo(owner, name, branch=branch, status="completed",
                                                               per_page=per_page).json()
        return list(data.get("workflow_runs") or [])

    def merge_base(self, repo: str, base: str, head: str) -> str | None:
        """The merge base of `head` with `base` (the compare API), None when GitHub names none."""
        gh, owner, name = self._gh(repo)
        with _api():
            data = gh.rest.repos.compare_commits(owner, name, f"{base}...{head}", per_page=1).json()
        return (data.get("merge_base_commit") or {}).get("sha")

    def list_open_issues(self, repo: str, label: str, limit: int = 300) -> list[Json]:
        """Open issues (not pull requests) with `label`, newest first, at most `limit`."""
        gh, owner, name = self._gh(repo)
        with _api():
            data = gh.rest.issues.list_for_repo(owner, name, state="open", labels=label, per_page=min(limit, 100)).json()
        return [i for i in data if "pull_request" not in i][:limit]

    # -- pull requests ----------------------------------------------------------------------
    def upsert_pull(self, repo: str, head: str, base: str, title: str, body: str, draft: bool = True) -> Json:
        """Update the open PR whose head is `head` (`branch` or `owner:branch`), else create one
        (a draft by default). A create that loses a race to another worker updates instead."""
        gh, owner, name = self._gh(repo)
        label = head if ":" in head else f"{owner}:{head}"
        with _api():
            existing = self._open_pull(gh, owner, name, label)
            if existing is None:
                try:
                    return gh.rest.pulls.create(owner, name, title=title, head=head, base=base,
                                                body=body, draft=draft).json()
                except RequestFailed as exc:
                    if exc.response.status_code != 422:
                        raise
                    existing = self._open_pull(gh, owner, name, label)
                    if existing is None:
                        raise
            if existing.get("title") == title and existing.get("body") == body:
                return existing
            return gh.rest.pulls.update(owner, name, existing["number"], title=title, body=body).json()

    def _open_pull(self, gh: GitHub, owner: str, name: str, label: str) -> Json | None:
        pulls = gh.rest.pulls.list(owner, name, head=label, state="open").json()
        return pulls[0] if pulls else None

    def get_pull(self, repo: str, number: int) -> Json:
        gh, owner, name = self._gh(repo)
        with _api():
            return gh.rest.pulls.get(owner, name, number).json()

    def close_pull(self, repo: str, number: int) -> None:
        gh, owner, name = self._gh(repo)
        with _api():
            gh.rest.pulls.update(owner, name, number, state="closed")

    # -- commits (culprits) -----------------------------------------------------------------
    def get_commit(self, repo: str, sha: str) -> Json:
        gh, owner, name = self._gh(repo)
        with _api():
            return gh.rest.repos.get_commit(owner, name, sha, per_page=1).json()

    def compare_commits(self, repo: str, base: str, head: str, max_commits: int = COMPARE_MAX_COMMITS) -> Json:
        """`GET /compare/{base}...{head}`: every commit (oldest first, pages of 100 up to
        `max_commits`) and the first page's `files` (GitHub lists at most 300)."""
        gh, owner, name = self._gh(repo)
        basehead = f"{quote(base, safe='')}...{quote(head, safe='')}"
        with _api():
            first = gh.rest.repos.compare_commits(owner, name, basehead, page=1, per_page=PER_PAGE).json()
            commits = list(first.get("commits") or [])
            total = int(first.get("total_commits") or len(commits))
            page = 1
            while len(commits) < min(total, max_commits):
                page += 1
                more = gh.rest.repos.compare_commits(owner, name, basehead, page=page, per_page=PER_PAGE).json()
                if not more.get("commits"):
                    break
                commits += more["commits"]
        return {**first, "commits": commits[:max_commits]}

    def commit_pulls(self, repo: str, sha: str) -> list[Json]:
        """The pull requests GitHub associates with a commit (the merged one that introduced it)."""
        gh, owner, name = self._gh(repo)
        return self._all(gh.rest.repos.list_pull_requests_associated_with_commit, gh, list, owner=owner,
                         repo=name, commit_sha=sha)

    def file_at(self, repo: str, path: str, ref: str) -> str | None:
        """A file's text at `ref` (the contents API); None when it is not there. A file over
        1 MB (GitHub then sends no content in JSON) raises, as it cannot be read this way."""
        gh, owner, name = self._gh(repo)
        with _api():
            try:
                data = gh.rest.repos.get_content(owner, name, quote(path, safe="/"), ref=ref).json()
            except RequestFailed as exc:
                if exc.response.status_code == 404:
                    return None
                raise
        if not isinstance(data, dict) or data.get("type") != "file":
            return None
        if data.get("encoding") != "base64":
            raise GitHubAPIError(413, f"{path} at {ref[:12]} is too large for the contents API")
        return base64.b64decode(data.get("content") or "").decode("utf-8")

    # -- git --------------------------------------------------------------------------------
    def clone_url(self, repo: str) -> str:
        """`https://x-access-token:TOKEN@host/owner/name.git`, or the `clone_urls` override.
        Contains a secret: never log it."""
        override = self._clone_urls.get(repo.lower())
        if override is not None:
            text = str(override)
            return text if "://" in text else Path(text).resolve().as_uri()
        with _api():
            return self.auth.clone_url(repo)

    def read_clone_url(self, repo: str) -> str:
        """A URL that can only read `repo` (`GitHubAuth.read_clone_url`), for a repro worker;
        the `clone_urls` override as is. Contains a secret in App mode: never log it."""
        override = self._clone_urls.get(repo.lower())
        if override is not None:
            text = str(override)
            return text if "://" in text else Path(text).resolve().as_uri()
        with _api():
            return self.auth.read_clone_url(repo)
