"""How the status page words things: ages, durations, what a run is about, artifact order.
Plain functions over the models, registered as Jinja filters by `app.web.pages`."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Iterable

from app.db.models import Artifact, Run, StageEvent
from app.domain import RunStatus, Verdict
from app.runstate import RunView

# Read top to bottom: the report first, the log (long, and mostly for debugging) last.
_ARTIFACT_RANK = {"report": 0, "markdown": 0, "repro": 1, "python": 2, "json": 3, "text": 3, "log": 9}


def as_utc(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def _now() -> datetime:
    return datetime.now(timezone.utc)


def duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    seconds = max(0.0, seconds)
    if seconds < 0.1:
        return "<0.1s"
    if seconds < 60:
        return f"{seconds:.1f}s" if seconds < 10 else f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds // 60:.0f}m {seconds % 60:.0f}s"
    if seconds < 86400:
        return f"{seconds // 3600:.0f}h {seconds % 3600 // 60:.0f}m"
    return f"{seconds // 86400:.0f}d {seconds % 86400 // 3600:.0f}h"


def ago(value: datetime | None) -> str:
    if value is None:
        return ""
    return duration((_now() - as_utc(value)).total_seconds()) + " ago"


def utc(value: datetime | None) -> str:
    """The exact time, for a tooltip: `2026-11-22 03:08:54 UTC`."""
    return as_utc(value).strftime("%Y-%m-%d %H:%M:%S UTC") if value else ""


def elapsed(start: datetime | None, end: datetime | None) -> str:
    """From `start` to `end`, or to now while it has not ended."""
    if start is None:
        return ""
    return duration((as_utc(end or _now()) - as_utc(start)).total_seconds())


def stage_duration(event: StageEvent) -> str:
    return elapsed(event.started_at, event.ended_at)


def run_duration(run: Run) -> str:
    return elapsed(run.started_at, run.ended_at)


def label(status: str) -> str:
    """`awaiting_approval` -> `awaiting approval`."""
    return str(status).replace("_", " ")


def shown_verdict(run: Run) -> str:
    """The verdict as it stands: a run that was approved and runs again is no longer
    `awaiting-approval` (the pipeline sets its real verdict when it ends)."""
    verdict = run.verdict or ""
    if verdict == Verdict.awaiting_approval and run.status in (RunStatus.queued, RunStatus.running):
        return ""
    return verdict


def device(run: Run) -> str:
    """Where the run's repro ran: the GPU queue's workers have CUDA devices, the others do not."""
    return "CUDA (a GPU worker)" if run.queue == "repro-gpu" else "CPU"


def subject(run: Run) -> str:
    """What the run is about: `#123`, `CI run 456`, or its target."""
    if run.issue is not None:
        return f"#{run.issue}"
    if (run.params or {}).get("workflow_run_id"):
        return f"CI run {run.params['workflow_run_id']}"
    return run.target or "—"


def subject_url(run: Run) -> str | None:
    """The issue or CI run on GitHub, when the run knows its address."""
    url = run.target or str((run.params or {}).get("url") or "")
    return url if url.startswith("https://") else None


def pull_request_url(stages: Iterable[StageEvent]) -> str | None:
    """The draft PR a CI job opened (recorded in its publish stage's output)."""
    for event in stages:
        if url := RunView.load(event.output if isinstance(event.output, dict) else {}).pull_request:
            return url
    return None


def reading_order(artifacts: Iterable[Artifact]) -> list[Artifact]:
    return sorted(artifacts, key=lambda a: _ARTIFACT_RANK.get(a.kind, 5))


FILTERS: dict[str, Any] = {
    "ago": ago,
    "duration": duration,
    "label": label,
    "run_duration": run_duration,
    "stage_duration": stage_duration,
    "subject": subject,
    "shown_verdict": shown_verdict,
    "device": device,
    "subject_url": subject_url,
    "utc": utc,
}
