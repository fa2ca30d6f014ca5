"""The approval view of a run that waits for a person: the exact code that would run, the
security review's findings with their line numbers (flagged in the code), who wrote it and
where, and the stage that waits. Shown at the top of the run page."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from markupsafe import Markup

from app.db.models import Run, RunStatus, StageEvent
from app.domain import StageStatus
from app.web import render
from app.web.figures import figures

GITHUB = "https://github.com/"


@dataclass
class Approval:
    stage: str  # the stage that waits
    reason: str  # its summary: why it waits
    code: Markup | None = None  # highlighted, numbered, finding lines flagged
    source: str = ""
    author: str = ""
    author_url: str | None = None
    source_url: str | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)


def approval_view(run: Run, stages: list[StageEvent]) -> Approval | None:
    if run.status != RunStatus.awaiting_approval:
        return None
    waiting = next((e for e in reversed(stages) if e.status == StageStatus.waiting), None)
    view = Approval(stage=waiting.stage if waiting else "", reason=waiting.summary if waiting else "")
    found = figures(stages, run.params)
    view.findings = sorted(found.findings, key=lambda f: (_line(f), str(f.get("kind", ""))))
    if found.repro:
        view.source = str(found.repro.get("source") or "")
        lines = tuple(sorted({_line(f) for f in view.findings if _line(f) > 0}))
        view.code = render.python(view.source, mark_lines=lines)
        view.author = str(found.repro.get("author") or "")
        view.author_url = GITHUB + view.author if _login(view.author) else None
        url = str(found.repro.get("url") or "")
        view.source_url = url if render.safe_link(url) and not url.startswith("#") else None
    return view


def _line(finding: dict[str, Any]) -> int:
    try:
        return int(finding.get("line") or 0)
    except (TypeError, ValueError):
        return 0


def _login(name: str) -> bool:
    """A GitHub login (letters, digits, single hyphens, <= 39 characters; `[bot]` allowed)."""
    base = name.removesuffix("[bot]")
    return 0 < len(base) <= 39 and all(c.isalnum() or c == "-" for c in base) and not base.startswith("-")


def finding_lines(findings: Iterable[dict[str, Any]]) -> list[int]:
    return sorted({_line(f) for f in findings if _line(f) > 0})
