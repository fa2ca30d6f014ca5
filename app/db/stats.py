"""Counts for /metrics, computed from the database when Prometheus scrapes.

Why from the database: workers run on many machines (one Postgres, one Redis); a per-process
counter would need a shared multiprocess directory on each host and would lose what a dead
worker counted. The database already records every delivery, run, stage and verdict, so a
scrape reads exact totals with a handful of GROUP BY queries and nothing is counted twice.

The cost: a retry that deletes a run's stage events (or restarts a finished run) lowers a
total, which Prometheus reads as a counter reset.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import case, func, literal
from sqlmodel import Session, col, select

from app.db.models import FINISHED, Delivery, Run, StageEvent
from app.domain import RerunVerdict, Verdict
from app.runstate import RunView

# Stage durations span a webhook's bookkeeping (milliseconds) to a CI job's rerun phase (minutes).
DURATION_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)
LABEL_MAX = 80
# `/metrics` labels come from a closed set: a verdict is free text (`2 failures, 0 repeated`, a
# fuzz job's error), and one series per distinct text would grow without bound.
# The set: the domain's verdict words (an issue's, a CI job's reruns'), then the first words of
# the other kinds' verdicts (their report status, a count of failures).
VERDICT_LABELS = (
    *(verdict.value for verdict in Verdict), *(verdict.value.replace("_", "-") for verdict in RerunVerdict),
    "needs-build", "success", "partial", "failed", "failures", "no-failures", "selftest", "other",
)
SANDBOX_STAGES = ("reproduce", "rerun")


@dataclass
class Histogram:
    buckets: list[int]  # cumulative counts, one per DURATION_BUCKETS bound
    count: int
    total: float


@dataclass
class Stats:
    deliveries: dict[tuple[str, str], int] = field(default_factory=dict)  # (event, outcome)
    runs_finished: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, status)
    runs_active: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, status)
    verdicts: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, verdict)
    stage_durations: dict[tuple[str, str], Histogram] = field(default_factory=dict)  # (kind, stage)
    sandbox_runs: dict[str, int] = field(default_factory=dict)  # outcome


def delivery_outcome():  # noqa: ANN201  (a SQL expression)
    """A delivery's outcome text, reduced to a few values a dashboard can group by."""
    outcome = col(Delivery.outcome)
    return case(
        (outcome == "pong", literal("pong")),
        (outcome.like("ignored%"), literal("ignored")),
        (outcome.like("could not enqueue%"), literal("not_queued")),
        (outcome.like("%queued"), literal("queued")),
        else_=literal("received"),
    )


def verdict_label(verdict: str) -> str:
    """A verdict's category for a metric label: its first word (`success: ...` -> `success`,
    `2 failures, ...` -> `failures`, `0 failures` -> `no-failures`), or `other`."""
    head = re.split(r"[:,(]", verdict.strip().lower(), maxsplit=1)[0].strip()
    counted = re.fullmatch(r"(\d+) failures?(?: .*)?", head)
    if counted:
        return "no-failures" if int(counted.group(1)) == 0 else "failures"
    head = head.replace(" ", "-").replace("_", "-")
    if head.startswith("selftest"):
        return "selftest"
    return head if head in VERDICT_LABELS else "other"


def _seconds(session: Session):  # noqa: ANN202
    started, ended = col(StageEvent.started_at), col(StageEvent.ended_at)
    if session.get_bind().dialect.name == "postgresql":
        return func.extract("epoch", ended - started)
    return (func.julianday(ended) - func.julianday(started)) * 86400.0


def collect(session: Session) -> Stats:
    stats = Stats()
    outcome = delivery_outcome()
    for event, kind, n in session.exec(select(Delivery.event, outcome, func.count()).group_by(Delivery.event, outcome)):  # type: ignore[call-overload]
        stats.deliveries[(event, kind)] = int(n)
    for kind, status, n in session.exec(select(Run.kind, Run.status, func.count()).group_by(Run.kind, Run.status)):  # type: ignore[call-overload]
        target = stats.runs_finished if status in FINISHED else stats.runs_active
        target[(kind, status)] = int(n)
    verdicts = select(Run.kind, Run.verdict, func.count()).where(col(Run.verdict).is_not(None)).group_by(Run.kind, Run.verdict)
    for kind, verdict, n in session.exec(verdicts):  # type: ignore[call-overload]
        key = (kind, verdict_label(str(verdict)))
        stats.verdicts[key] = stats.verdicts.get(key, 0) + int(n)
    stats.stage_durations = _durations(session)
    stats.sandbox_runs = _sandbox_runs(session)
    return stats


def _durations(session: Session) -> dict[tuple[str, str], Histogram]:
    seconds = _seconds(session)
    columns: list[Any] = [func.sum(case((seconds <= bound, 1), else_=0)) for bound in DURATION_BUCKETS]
    query = (
        select(Run.kind, StageEvent.stage, func.count(), func.sum(seconds), *columns)
        .join(Run, col(Run.id) == col(StageEvent.run_id))
        .where(col(StageEvent.ended_at).is_not(None))
        .group_by(Run.kind, StageEvent.stage)
    )
    found = {}
    for kind, stage, count, total, *buckets in session.exec(query):  # type: ignore[call-overload]
        found[(kind, stage)] = Histogram([int(b or 0) for b in buckets], int(count), max(0.0, float(total or 0.0)))
    return found


def _sandbox_runs(session: Session) -> dict[str, int]:
    """Sandboxed runs by outcome, from what the reproduce (issue) and rerun (CI) stages stored.
    Minimization candidates and bisection probes are not counted (their outcomes are not kept)."""
    counts: dict[str, int] = {}
    query = select(StageEvent.output).where(col(StageEvent.stage).in_(SANDBOX_STAGES), col(StageEvent.ended_at).is_not(None))
    for output in session.exec(query):
        for outcome, n in sandbox_outcomes(output or {}).items():
            counts[outcome] = counts.get(outcome, 0) + n
    return counts


def sandbox_outcomes(output: dict[str, Any]) -> dict[str, int]:
    """A reproduce or rerun stage's runs by outcome, read through the pipelines' own records
    (`app.runstate.RunView`: the issue's `Reproduction`, the CI job's `RerunSummary`)."""
    view = RunView.load(output)
    if view.reproduction is not None and view.reproduction.outcomes:
        return {str(k)[:LABEL_MAX]: int(v) for k, v in view.reproduction.outcomes.items() if isinstance(v, int)}
    rerun = view.rerun
    if rerun is not None and isinstance(rerun.get("runs"), int):
        named = {"failed": rerun.failures, "other_failure": rerun.other_failures, "timeout": rerun.timeouts,
                 "error": rerun.errors}
        named = {k: int(v or 0) for k, v in named.items()}
        named["passed"] = max(0, rerun.runs - sum(named.values()))
        return {k: v for k, v in named.items() if v}
    return {}
