"""Commits of the fake GitHub, answered from the bare repository it serves over git (`serve_git`).

The endpoints, shaped as GitHub's REST API answers them:

- `GET /repos/{o}/{r}/commits/{ref}`: one commit (`sha`, `commit.message`, dates, `parents`, `files`);
- `GET /repos/{o}/{r}/compare/{base}...{head}`: `status` (ahead, behind, diverged, identical),
  `ahead_by`, `behind_by`, `total_commits`, `merge_base_commit`, `commits` oldest first and
  `files` (at most 300). Without `page`/`per_page` at most 250 commits, the most recent ones; with
  them, pages in the `Link` header, `files` on the first page only;
- `GET /repos/{o}/{r}/commits/{sha}/pulls`: the merged pull requests whose merge commit is `sha`
  (seed them with `add_merged_pull`), paginated;
- `GET /repos/{o}/{r}/contents/{path}?ref=`: a file as base64 JSON (wrapped at 60 columns),
  `encoding: none` and no content over 1 MB, 404 when absent.

An unknown commit answers 404 (`No commit found for SHA: ...`) or, for compare, 404 `Not Found`.
"""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from tests.fakes.fake_github_routes import error, not_found, paginate, route
from tests.fakes.fake_github_state import HOST, RepoState, now_iso, user_json

if TYPE_CHECKING:
    from tests.fakes.fake_github import FakeGitHub

API = "https://api.github.com"
UNPAGED_COMMITS = 250
MAX_FILES = 300
CONTENT_JSON_LIMIT = 1 << 20
_STATUS = {"A": "added", "D": "removed", "M": "modified", "R": "renamed", "C": "copied", "T": "changed"}


def _git(bare: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", *args], cwd=bare, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(bare)})
    if check and done.returncode != 0:
        raise LookupError(done.stderr.strip())
    return done.stdout


def _resolve(bare: Path, ref: str) -> str | None:
    out = _git(bare, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False).strip()
    return out or None


def _commit_json(repo: RepoState, bare: Path, sha: str) -> dict[str, Any]:
    fields = _git(bare, "show", "-s", "--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%T%x00%B",
                  sha).split("\x00")
    full, parents, an, ae, ad, cn, ce, cd, tree, message = fields[:10]
    api = f"{API}/repos/{repo.full_name}"
    return {
        "sha": full, "node_id": f"C_{full[:12]}",
        "commit": {"author": {"name": an, "email": ae, "date": ad}, "committer": {"name": cn, "email": ce, "date": cd},
                   "message": message.rstrip("\n"), "tree": {"sha": tree, "url": f"{api}/git/trees/{tree}"},
                   "url": f"{api}/git/commits/{full}", "comment_count": 0},
        "url": f"{api}/commits/{full}", "html_url": f"{HOST}/{repo.full_name}/commit/{full}",
        "comments_url": f"{api}/commits/{full}/comments", "author": None, "committer": None,
        "parents": [{"sha": p, "url": f"{api}/commits/{p}", "html_url": f"{HOST}/{repo.full_name}/commit/{p}"}
                    for p in parents.split()],
    }


def _files(repo: RepoState, bare: Path, base: str, head: str) -> list[dict[str, Any]]:
    out = _git(bare, "diff", "--name-status", "-M", "-z", base, head)
    parts, files, at = out.split("\x00"), [], 0
    while at < len(parts) and parts[at]:
        code = parts[at]
        status = _STATUS.get(code[0], "modified")
        if code[0] in "RC":
            previous, name, at = parts[at + 1], parts[at + 2], at + 3
        else:
            previous, name, at = None, parts[at + 1], at + 2
        entry = {"sha": _git(bare, "rev-parse", f"{head}:{name}", check=False).strip() if status != "removed" else
                 "0" * 40, "filename": name, "status": status, "additions": 0, "deletions": 0, "changes": 0,
                 "blob_url": f"{HOST}/{repo.full_name}/blob/{head}/{name}",
                 "raw_url": f"{HOST}/{repo.full_name}/raw/{head}/{name}",
                 "contents_url": f"{API}/repos/{repo.full_name}/contents/{name}?ref={head}"}
        if previous is not None:
            entry["previous_filename"] = previous
        files.append(entry)
    return files


def _bare(fake: "FakeGitHub", repo: RepoState) -> Path | None:
    return fake.git_dirs.get(repo.full_name.lower())


def get_commit(fake: "FakeGitHub"):
    def handler(request: Request, repo: RepoState, body: Any) -> Response:
        bare = _bare(fake, repo)
        ref = request.path_params["ref"]
        sha = _resolve(bare, ref) if bare else None
        if sha is None:
            return error(422, f"No commit found for SHA: {ref}")
        data = _commit_json(repo, bare, sha)
        parent = data["parents"][0]["sha"] if data["parents"] else "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
        return JSONResponse(data | {"files": _files(repo, bare, parent, sha)})
    return handler


def compare(fake: "FakeGitHub"):
    def handler(request: Request, repo: RepoState, body: Any) -> Response:
        bare = _bare(fake, repo)
        base_ref, _, head_ref = request.path_params["basehead"].partition("...")
        base = _resolve(bare, base_ref) if bare and head_ref else None
        head = _resolve(bare, head_ref) if bare and head_ref else None
        if base is None or head is None:
            return not_found()
        merge_base = _git(bare, "merge-base", base, head, check=False).strip()
        if not merge_base:
            return error(404, f"No common ancestor between {base_ref} and {head_ref}.")
        ahead = [line for line in _git(bare, "rev-list", "--reverse", f"{base}..{head}").split() if line]
        behind = int(_git(bare, "rev-list", "--count", f"{head}..{base}").strip() or 0)
        status = "identical" if not ahead and not behind else "ahead" if not behind else \
            "behind" if not ahead else "diverged"
        paged = "page" in request.query_params or "per_page" in request.query_params
        page = max(1, int(request.query_params.get("page", 1)))
        headers: dict[str, str] = {}
        if paged:
            shown, headers = paginate(request, ahead)
        else:
            shown = ahead[-UNPAGED_COMMITS:]
        api = f"{API}/repos/{repo.full_name}/compare/{base_ref}...{head_ref}"
        data = {
            "url": api, "html_url": f"{HOST}/{repo.full_name}/compare/{base_ref}...{head_ref}",
            "permalink_url": f"{HOST}/{repo.full_name}/compare/{base[:7]}...{head[:7]}",
            "diff_url": f"{HOST}/{repo.full_name}/compare/{base_ref}...{head_ref}.diff",
            "patch_url": f"{HOST}/{repo.full_name}/compare/{base_ref}...{head_ref}.patch",
            "base_commit": _commit_json(repo, bare, base), "merge_base_commit": _commit_json(repo, bare, merge_base),
            "status": status, "ahead_by": len(ahead), "behind_by": behind, "total_commits": len(ahead),
            "commits": [_commit_json(repo, bare, sha) for sha in shown],
        }
        if page == 1:
            data["files"] = _files(repo, bare, merge_base, head)[:MAX_FILES]
        return JSONResponse(data, headers=headers)
    return handler


def commit_pulls(fake: "FakeGitHub"):
    def handler(request: Request, repo: RepoState, body: Any) -> Response:
        bare = _bare(fake, repo)
        sha = _resolve(bare, request.path_params["sha"]) if bare else None
        if sha is None:
            return error(422, f"No commit found for SHA: {request.path_params['sha']}")
        pulls = [p for p in repo.pulls.values() if p.get("merge_commit_sha") == sha]
        page, headers = paginate(request, pulls)
        return JSONResponse(page, headers=headers)
    return handler


def contents(fake: "FakeGitHub"):
    def handler(request: Request, repo: RepoState, body: Any) -> Response:
        bare = _bare(fake, repo)
        ref = request.query_params.get("ref") or repo.default_branch
        sha = _resolve(bare, ref) if bare else None
        path = request.path_params["path"].strip("/")
        if sha is None:
            return error(404, f"No commit found for the ref {ref}")
        kind = _git(bare, "cat-file", "-t", f"{sha}:{path}", check=False).strip()
        if kind != "blob":
            return not_found()
        blob = subprocess.run(["git", "cat-file", "blob", f"{sha}:{path}"], cwd=bare, capture_output=True,
                              timeout=60).stdout
        api = f"{API}/repos/{repo.full_name}/contents/{path}?ref={ref}"
        data = {"type": "file", "name": path.rsplit("/", 1)[-1], "path": path, "size": len(blob),
                "sha": _git(bare, "rev-parse", f"{sha}:{path}").strip(), "url": api,
                "html_url": f"{HOST}/{repo.full_name}/blob/{ref}/{path}",
                "download_url": f"https://raw.githubusercontent.com/{repo.full_name}/{ref}/{path}"}
        if len(blob) > CONTENT_JSON_LIMIT:
            return JSONResponse(data | {"encoding": "none", "content": ""})
        encoded = base64.b64encode(blob).decode()
        wrapped = "\n".join(encoded[i:i + 60] for i in range(0, len(encoded), 60)) + "\n"
        return JSONResponse(data | {"encoding": "base64", "content": wrapped})
    return handler


def commit_routes(fake: "FakeGitHub") -> list:
    R = "/repos/{owner}/{repo}"
    return [
        route(fake, R + "/commits/{sha}/pulls", "GET", commit_pulls(fake)),
        route(fake, R + "/commits/{ref}", "GET", get_commit(fake)),
        route(fake, R + "/compare/{basehead:path}", "GET", compare(fake)),
        route(fake, R + "/contents/{path:path}", "GET", contents(fake)),
    ]


def add_merged_pull(fake: "FakeGitHub", repo: str, number: int, merge_commit_sha: str, *, title: str = "",
                    user: str = "contributor") -> dict[str, Any]:
    """Seed PR `number` as merged by the commit `merge_commit_sha` (what `commits/{sha}/pulls` finds)."""
    pull = fake.add_pull(repo, f"feature-{number}", title=title, draft=False, state="closed", number=number, user=user)
    with fake.lock:
        pull.update(merged=True, merged_at=now_iso(), closed_at=now_iso(), merge_commit_sha=merge_commit_sha,
                    user=user_json(user))
    return pull
