"""The status page's run list: filters, text search and keyset pagination, newest first.

A page is `limit` runs with ids below the cursor (`before`), so it stays stable while new runs
arrive, and costs one indexed range scan however deep a person pages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from sqlalchemy import func, or_
from sqlmodel import Session, col, select

from app.db.models import FINISHED, Run, StageEvent
from app.runstate import RunView

MAX_LIMIT = 200
SEARCH_MAX = 200  # characters of a search query used


@dataclass(frozen=True)
class RunFilter:
    repo: str = ""
    kind: str = ""
    status: str = ""
    verdict: str = ""
    q: str = ""  # case-insensitive substring of title, repo, target or verdict

    def active(self) -> dict[str, str]:
        return {k: v for k, v in self.__dict__.items() if v}


@dataclass
class RunPage:
    runs: list[Run]
    next_before: int | None  # the cursor of the next (older) page, None on the last page
    pull_requests: dict[int, str] = field(default_factory=dict)  # run id -> draft PR url


def title_of(data: dict[str, Any]) -> str:
    """The issue's or workflow run's title in a webhook payload or a `fetch` stage's output."""
    for key, name in (("issue", "title"), ("workflow_run", "display_title"), ("workflow_run", "name")):
        value = data.get(key)
        if isinstance(value, dict) and isinstance(value.get(name), str) and value[name].strip():
            return value[name].strip()[:300]
    return ""


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def list_runs(session: Session, filters: RunFilter, before: int | None = None, limit: int = 50) -> RunPage:
    limit = min(max(limit, 1), MAX_LIMIT)
    query = select(Run)
    for name in ("repo", "kind", "status", "verdict"):
        value = getattr(filters, name)
        if value:
            query = query.where(getattr(Run, name) == value)
    if filters.q.strip():
        pattern = f"%{_escape_like(filters.q.strip()[:SEARCH_MAX].lower())}%"
        query = query.where(or_(*(
            func.lower(column).like(pattern, escape="\\")
            for column in (col(Run.title), col(Run.repo), col(Run.target), func.coalesce(col(Run.verdict), ""))
        )))
    if before is not None:
        query = query.where(col(Run.id) < before)
    rows = list(session.exec(query.order_by(col(Run.id).desc()).limit(limit + 1)))
    runs = rows[:limit]
    next_before = runs[-1].id if len(rows) > limit else None
    return RunPage(runs, next_before, pull_requests(session, [r.id for r in runs if r.id is not None]))


def pull_requests(session: Session, run_ids: list[int]) -> dict[int, str]:
    """The draft PR each run opened (a `pr_url` in one of its stages' outputs)."""
    if not run_ids:
        return {}
    events = session.exec(
        select(StageEvent).where(col(StageEvent.run_id).in_(run_ids), col(StageEvent.stage).in_(("publish", "pr")))
    )
    found: dict[int, str] = {}
    for event in events:
        if url := RunView.load(event.output if isinstance(event.output, dict) else {}).pull_request:
            found[event.run_id] = url
    return found


def choices(session: Session, repo_shown: Callable[[Run], bool] | None = None) -> dict[str, list[str]]:
    """The values the filters offer: every repo, kind, status and verdict seen (at most 100 each).
    `repo_shown(run)`: whether the viewer may see that repository's name, asked with the
    repository's newest run (a private repository is named only to whoever may read it)."""
    result: dict[str, list[str]] = {}
    for name in ("repo", "kind", "status", "verdict"):
        column = getattr(Run, name)
        values = session.exec(select(column).where(column.is_not(None), column != "").distinct().order_by(column).limit(100))
        result[name] = [str(v) for v in values]
    if repo_shown is not None:
        newest = newest_run_per_repo(session)
        result["repo"] = [repo for repo in result["repo"] if repo_shown(session.get(Run, newest[repo]))]
    return result


def newest_run_per_repo(session: Session) -> dict[str, int]:
    """Each repository that has runs, and the id of its newest run (what access is asked of)."""
    rows = session.exec(select(Run.repo, func.max(Run.id)).where(col(Run.repo).is_not(None), Run.repo != "")  # type: ignore[call-overload]
                        .group_by(Run.repo))
    return {str(repo): int(run_id) for repo, run_id in rows}


def activity(session: Session, repos: list[str], without_repo: bool) -> tuple[Any, ...]:
    """How many runs of `repos` (and, with `without_repo`, runs of no repository) there are, the
    last change to one, and how many are active: what a live list compares between polls."""
    where = col(Run.repo).in_(repos)
    if without_repo:
        where = or_(where, col(Run.repo).is_(None), Run.repo == "")
    count, newest = session.exec(select(func.count(Run.id), func.max(Run.updated_at)).where(where)).one()  # type: ignore[call-overload]
    active = session.exec(select(func.count(Run.id)).where(where, col(Run.status).not_in(list(FINISHED)))).one()
    return count, newest, active
