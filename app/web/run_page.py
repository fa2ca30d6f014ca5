"""`/runs/{id}`: one run: its stage timeline (live, `app.web.sse`), the approval view when it
waits, the failure figures, the repros highlighted with the diff to the minimized one, the
rendered report, what the repro printed, the log, and the other artifacts.
`/runs/{id}/artifacts/{name}`: one artifact as plain text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, PlainTextResponse
from sqlmodel import Session

from app import approvals
from app.api.limits import RunId
from app.api.deps import ServicesDep, SessionDep, ViewerDep
from app.db import queries
from app.db.models import FINISHED, Artifact, Run, RunStatus, StageEvent, utcnow
from app.domain import StageStatus
from app.web import display, render
from app.web.approval import approval_view
from app.web.figures import figures
from app.web.signatures import run_signatures
from app.web.templating import SECURITY_HEADERS, fragment, page, unreadable

ARTIFACT_DISPLAY_LIMIT = 200_000  # characters shown per artifact; the raw view has them all
LOG_TAIL_LINES = 300  # lines of the run log the page shows (and streams)
REPORT_KINDS = ("report", "markdown")
router = APIRouter()


@dataclass
class TimelineRow:
    event: StageEvent
    seconds: float
    running: bool


def current(stages: list[StageEvent]) -> list[StageEvent]:
    """The stage events as they stand: a `waiting` row that a later event of the same stage
    took over (approved, then run) is history, not a stage that still waits."""
    later = {}
    for index, event in enumerate(stages):
        later[event.stage] = index
    return [e for i, e in enumerate(stages) if not (e.status == StageStatus.waiting and later[e.stage] > i)]


def timeline(stages: list[StageEvent]) -> tuple[list[TimelineRow], float]:
    """Each stage with its duration so far; the longest, to scale the bars."""
    now = utcnow()
    rows = []
    for event in current(stages):
        end = display.as_utc(event.ended_at) if event.ended_at else now
        rows.append(TimelineRow(event, max(0.0, (end - display.as_utc(event.started_at)).total_seconds()), event.ended_at is None))
    return rows, max((row.seconds for row in rows), default=0.0)


def log_tail(artifacts: list[Artifact], lines: int = LOG_TAIL_LINES) -> str:
    log = next((a for a in artifacts if a.name == "log"), None)
    text = (log.content or "") if log else ""
    return "\n".join(text.splitlines()[-lines:])


def live_context(run: Run, stages: list[StageEvent], artifacts: list[Artifact], viewer: Any = None) -> dict[str, Any]:
    """What the live part of the page shows (sent again by the event stream on each change).
    Buttons only for whoever is signed in; each POST still checks write permission."""
    rows, longest = timeline(stages)
    signed_in = bool(viewer is not None and viewer.signed_in)
    return {
        "run": run,
        "timeline": rows,
        "longest": longest or 1.0,
        "log": log_tail(artifacts),
        "pull_request": display.pull_request_url(stages),
        "viewer": viewer,
        "can_approve": signed_in and run.status == RunStatus.awaiting_approval,
        # The code shown, by digest: Approve approves that code and nothing else (`app.approvals`).
        "approval_sha256": waiting_digest(stages) if run.status == RunStatus.awaiting_approval else None,
        "can_reject": signed_in and run.status == RunStatus.awaiting_approval,
        "can_retry": signed_in and (run.status in FINISHED or run.status == RunStatus.awaiting_approval),
        "can_cancel": signed_in and run.status not in FINISHED,
    }


def waiting_digest(stages: list[StageEvent]) -> str | None:
    waiting = next((e for e in reversed(stages) if e.status == StageStatus.waiting), None)
    value = (waiting.output or {}).get(approvals.OUTPUT_KEY) if waiting is not None else None
    return value if isinstance(value, str) and value.isalnum() else None


def readable(session: Session, run_id: RunId, people: Any, viewer: Any) -> queries.RunDetail | None:
    """The run when `viewer` may read it; None whether it is missing or private to them."""
    detail = queries.run_detail(session, run_id)
    return detail if detail is not None and people.can_read(viewer, detail.run) else None


def render_live(request: Request, detail: queries.RunDetail, viewer: Any = None) -> str:
    """The page's live parts (`data-live` elements: header + timeline, log), as one HTML string."""
    context = live_context(detail.run, detail.stages, detail.artifacts, viewer)
    return fragment(request, "_live.html", context) + fragment(request, "_log.html", context)


@router.get("/runs/{run_id}", response_class=HTMLResponse, include_in_schema=False)
def run_page(request: Request, run_id: RunId, session: SessionDep, services: ServicesDep, viewer: ViewerDep) -> Any:
    detail = readable(session, run_id, services.people, viewer)
    if detail is None:
        return unreadable(request, viewer, f"run {run_id}")
    run, stages = detail.run, detail.stages
    found = figures(stages, run.params)
    original, minimized = repro_sources(detail, found)
    reports = [a for a in detail.artifacts if a.kind in REPORT_KINDS and a.content is not None]
    shown = {a.name for a in reports} | {"log", "repro_original.py", "repro_minimized.py"}
    return page(request, "run.html", {
        **live_context(run, stages, detail.artifacts, viewer),
        "approval": approval_view(run, stages),
        "figures": found,
        "original": render.python(original) if original else None,
        "minimized": render.python(minimized) if minimized else None,
        "diff": render.diff(original, minimized) if original and minimized else None,
        "reports": [(a, render.markdown(a.content[:ARTIFACT_DISPLAY_LIMIT])) for a in reports],
        "artifacts": [a for a in display.reading_order(detail.artifacts) if a.name not in shown],
        "limit": ARTIFACT_DISPLAY_LIMIT,
        "events": None if run.status in FINISHED else f"/runs/{run.id}/events",
        "downloads": [(which, f"/runs/{run.id}/repro/{which}.py") for which, text in
                      (("original", original), ("minimized", minimized)) if text],
        "rerun": rerun_commands(run, "minimized" if minimized else "original" if original else None),
        "approved_by": str((run.params or {}).get("approved_by") or ""),
        "signatures": run_signatures(run.kind, run.repo, run.params or {}, stages),
    }, viewer)


def repro_sources(detail: queries.RunDetail, found: Any = None) -> tuple[str, str]:
    """(original, minimized) repro text: from the stages' outputs, else the saved artifacts."""
    found = found or figures(detail.stages, detail.run.params)
    original = found.repro["source"] if found.repro else _artifact_text(detail.artifacts, "repro_original.py")
    return original, found.minimized or _artifact_text(detail.artifacts, "repro_minimized.py")


def rerun_commands(run: Run, repro: str | None) -> list[tuple[str, str]]:
    """What a person types to do it again on their machine: (what it does, the command)."""
    commands = []
    url = display.subject_url(run)
    if run.kind == "issue" and (url or (run.repo and run.issue)):
        commands.append(("the whole issue pipeline", f"scrub issue {url or f'{run.repo}#{run.issue}'}"))
    if run.kind == "ci_ingest" and url:
        commands.append(("the failing tests of this CI run", f"scrub ci-log {url}"))
    if repro:
        commands.append((f"the {repro} repro, once downloaded", f"scrub repro run-{run.id}-{repro}.py --runs 5"))
    return commands


def _artifact_text(artifacts: list[Artifact], name: str) -> str:
    return next((a.content or "" for a in artifacts if a.name == name), "")


@router.get("/runs/{run_id}/repro/{which}.py", response_class=PlainTextResponse, include_in_schema=False)
def repro_download(request: Request, run_id: RunId, which: str, session: SessionDep, services: ServicesDep,
                   viewer: ViewerDep) -> Any:
    """The original or minimized repro as a file to save (`run-12-minimized.py`)."""
    detail = readable(session, run_id, services.people, viewer)
    if detail is None:
        return unreadable(request, viewer, f"run {run_id}")
    original, minimized = repro_sources(detail)
    text = {"original": original, "minimized": minimized}.get(which)
    if not text:
        raise HTTPException(404, f"run {run_id} has no {which} repro")
    headers = {**SECURITY_HEADERS, "Content-Security-Policy": "sandbox; default-src 'none'",
               "Content-Disposition": f'attachment; filename="run-{run_id}-{which}.py"'}
    return PlainTextResponse(text, headers=headers, media_type="text/x-python")


@router.get("/runs/{run_id}/artifacts/{name}", response_class=PlainTextResponse, include_in_schema=False)
def artifact_text(request: Request, run_id: RunId, name: str, session: SessionDep, services: ServicesDep,
                  viewer: ViewerDep) -> Any:
    """The whole artifact as text/plain (never rendered: `nosniff`, and a sandbox CSP); `log`
    is the run's log tail."""
    run = session.get(Run, run_id)
    if run is None or not services.people.can_read(viewer, run):
        return unreadable(request, viewer, f"run {run_id}")
    if name == queries.LOG_ARTIFACT:
        content: str | None = queries.log_text(queries.run_log(session, run_id)) or None
    else:
        artifact = queries.find_artifact(session, run_id, name)
        content = artifact.content if artifact is not None else None
    if content is None:
        raise HTTPException(404, f"run {run_id} has no artifact {name!r} with text")
    headers = {**SECURITY_HEADERS, "Content-Security-Policy": "sandbox; default-src 'none'"}
    return PlainTextResponse(content, headers=headers)
