"""The bugs progression tracks, derived from the runs (no table of its own).

A bug is tracked once a run found it: an `issue` run whose verdict is `reproduces`, or a CI job
(`ci_failure`, `improve`) that opened a draft PR with a generated test (the test fails: the bug
is there). Every later run of that issue or PR moves its state: a newer `issue` run (someone
scrubbed it again) says what it found; a `progression` run's conclusive verdict (`reproduces`,
`passes-now`, `fixed`, `closed`) replaces the state, an inconclusive one only counts as a
check. So the runs are the history and `tracked()` reads it: one `TrackedBug` per issue or PR,
resolved ones included (the status page shows them), oldest first.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from app.db.models import ACTIVE, Run, StageEvent
from app.domain import STAGE_FINISHED, RunKind, RunStatus, TrackedBug, Verdict

CI_KINDS = (RunKind.ci_failure, RunKind.improve)
CONCLUSIVE = (Verdict.reproduces, Verdict.passes_now, Verdict.fixed, Verdict.closed)
ISSUE, PULL = "issue", "pull"


def run_state(session: Session, run_id: int) -> dict[str, Any]:
    """A run's pipeline state: the outputs of its finished stages merged in the order they ran."""
    events = session.exec(select(StageEvent).where(StageEvent.run_id == run_id).order_by(col(StageEvent.id)))
    latest: dict[str, StageEvent] = {}
    for event in events:
        latest[event.stage] = event
    state: dict[str, Any] = {}
    for event in sorted(latest.values(), key=lambda e: e.id or 0):
        if event.status in STAGE_FINISHED:
            state.update(event.output or {})
    return state


def _outputs(session: Session, run_ids: list[int], stage: str) -> dict[int, dict[str, Any]]:
    if not run_ids:
        return {}
    query = select(StageEvent).where(col(StageEvent.run_id).in_(run_ids), StageEvent.stage == stage)
    return {e.run_id: dict(e.output or {}) for e in session.exec(query.order_by(col(StageEvent.id)))
            if e.status in STAGE_FINISHED}


def _key(repo: str, number: int, target: str) -> tuple[str, int, str]:
    return repo.lower(), number, target


def tracked(session: Session) -> list[TrackedBug]:
    """Every issue and PR progression tracks or tracked, with its state and latest check."""
    runs = list(session.exec(select(Run).where(
        col(Run.kind).in_((RunKind.issue, RunKind.progression, *CI_KINDS))).order_by(col(Run.id))))
    ci = [r.id for r in runs if r.kind in CI_KINDS and r.status == RunStatus.succeeded and r.id is not None]
    published = _outputs(session, ci, "publish")
    reproduced = _outputs(session, [r.id for r in runs if r.kind == RunKind.issue and r.verdict == Verdict.reproduces
                                    and r.id is not None], "reproduce")
    bugs: dict[tuple[str, int, str], dict[str, Any]] = {}
    for run in runs:
        if run.kind == RunKind.issue and run.issue and run.status in ACTIVE:
            if (key := _key(run.repo, run.issue, ISSUE)) in bugs:  # scrubbed again right now: wait for it
                bugs[key]["active_run"] = run.id
        elif run.kind == RunKind.issue and run.issue:
            key = _key(run.repo, run.issue, ISSUE)
            if run.verdict == Verdict.reproduces:
                result = (reproduced.get(run.id or 0, {}).get("reproduction") or {}).get("result") or {}
                bugs[key] = {"repo": run.repo, "number": run.issue, "target": ISSUE, "source_run": run.id,
                             "state": Verdict.reproduces, "title": run.title, "installation_id": run.installation_id,
                             "build": str(result.get("environment") or "")}
            elif key in bugs and run.status == RunStatus.succeeded:  # scrubbed again: what it found stands
                bugs[key] |= {"state": run.verdict or "", "source_run": run.id}
        elif run.kind in CI_KINDS and (pr := published.get(run.id or 0, {})).get("pr_number"):
            key = _key(run.repo, int(pr["pr_number"]), PULL)
            bugs[key] = {"repo": run.repo, "number": int(pr["pr_number"]), "target": PULL, "source_run": run.id,
                         "state": Verdict.reproduces, "title": run.title, "installation_id": run.installation_id,
                         "build": ""}
        elif run.kind == RunKind.progression and run.issue:
            key = _key(run.repo, run.issue, str(run.params.get("target") or ISSUE))
            if key not in bugs:
                continue
            if run.status in ACTIVE:
                bugs[key]["active_run"] = run.id
                continue
            build = str((run.params.get("build") or {}).get("label") or "")
            bugs[key] |= {"last_check_run": run.id, "last_check_at": run.ended_at or run.updated_at,
                          "last_check_verdict": run.verdict or run.status, "last_check_build": build}
            if run.verdict in CONCLUSIVE:
                bugs[key] |= {"state": run.verdict, "build": build}
    return [TrackedBug(**fields) for fields in bugs.values()]


def found_at(session: Session, run_ids: list[int]) -> dict[int, datetime]:
    """When each of these runs ended (the moment a bug was found)."""
    if not run_ids:
        return {}
    query = select(Run.id, Run.ended_at).where(col(Run.id).in_(run_ids))
    return {run_id: ended for run_id, ended in session.exec(query) if ended is not None}


def runs_since(session: Session, since: datetime) -> dict[str, int]:
    """Progression runs created since `since`, per repository (lower case): the daily budget spent."""
    query = select(Run.repo).where(Run.kind == RunKind.progression, col(Run.created_at) >= since)
    counts: dict[str, int] = {}
    for repo in session.exec(query):
        counts[repo.lower()] = counts.get(repo.lower(), 0) + 1
    return counts


__all__ = ["ISSUE", "PULL", "found_at", "run_state", "runs_since", "tracked"]
