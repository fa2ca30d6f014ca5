"""Markdown a person reads: the issue comment (seed `001` step 8) and the run report (seed `002`).

Everything a repro printed and everything a stranger wrote is untrusted. The filters here keep
it inert: `fence` picks a fence longer than any backtick run inside (output cannot break out
of its block), `no_mentions` stops `@user` from pinging, and Scrubbot's hidden marker is
defused wherever it appears in untrusted text (so a repro cannot make the publisher edit a
different comment). The publisher appends the real marker; renderers never emit one.

- `render_issue_comment(IssueComment)`: first line exactly "This issue still reproduces on
  PyTorch <version>." or "This issue no longer reproduces on PyTorch <version>.", then only
  what is new.
- `render_notice(Notice)`: the comment for a run that stops before running code
  or cannot decide (screenshot only, unavailable hardware, inconclusive, awaiting approval).
- `render_run_report(RunReport)`: the generic run report; every pipeline fills a `RunReport`.
  See README.md beside this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import jinja2

from app.domain import Verdict

_MENTION = re.compile(r"(?<![\w`])@(?=[A-Za-z0-9])")
_MARKER = re.compile(r"<!--(\s*scrubbot)", re.IGNORECASE)
_BACKTICKS = re.compile(r"`+")
_ZWSP = "\u200b"


def defuse_marker(text: str) -> str:
    """Break any `<!-- scrubbot...` so only the publisher's own marker can match."""
    return _MARKER.sub(lambda m: f"<!{_ZWSP}--{m.group(1)}", text)


def no_mentions(text: Any) -> str:
    """Prose from untrusted text: `@user` no longer notifies anyone; markers defused."""
    return defuse_marker(_MENTION.sub("@" + _ZWSP, str(text)))


def fence(text: str, lang: str = "") -> str:
    """A fenced code block that `text` cannot close, however many backticks it prints."""
    body = defuse_marker(str(text).rstrip("\n"))
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{body}\n{ticks}"


def inline_code(text: Any) -> str:
    """Inline code that `text` cannot close; newlines folded."""
    body = defuse_marker(" ".join(str(text).split()))
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{ticks}{pad}{body}{pad}{ticks}"


def table_cell(text: Any) -> str:
    return no_mentions(" ".join(str(text or "").split())).replace("|", "\\|")


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("app.engine.report", "templates"),
        autoescape=False,  # markdown, not HTML: the filters above do the escaping
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters.update(fence=fence, no_mentions=no_mentions, inline_code=inline_code,
                       table_cell=table_cell, duration=duration)
    return env


def _render(template: str, **values: Any) -> str:
    text = _environment().get_template(template).render(**values)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


@dataclass
class IssueComment:
    """What the issue comment says; leave a field empty when it is not new."""

    reproduces: bool
    version: str
    source_url: str | None = None
    source_author: str | None = None
    minimized: str | None = None
    flaky_ratio: str | None = None  # "3/5": runs that reproduced / runs
    fixed_in: str | None = None  # first environment where it no longer reproduces
    last_broken: str | None = None  # the environment just before
    regressed_in: str | None = None  # first environment where it reproduces (`/scrub bisect`)
    last_good: str | None = None
    # Environments between last_broken/last_good and fixed_in/regressed_in that could not be
    # tested: the change is somewhere in that range, not necessarily at fixed_in/regressed_in.
    untested: list[str] = field(default_factory=list)
    different_error: str | None = None  # what the repro raises now, when not the reported error
    reported_error: str | None = None
    conditions: list[str] = field(default_factory=list)
    # The evidence: what the runs showed (the failure and its frame, or what happens now).
    observed: str | None = None  # "RuntimeError: ...", "killed by SIGSEGV", "timed out after 60 s"
    frame: str | None = None  # 'repro.py, line 7: y = F.conv2d(x1, w1)'
    runs: int = 0
    failures: int = 0
    interval: tuple[float, float] | None = None  # 95% Wilson interval of the failure rate
    now: str | None = None  # for "no longer reproduces": what the repro does now
    # Which block ran and why (names it: where, author, first line; the selection's reason).
    source_where: str | None = None  # "the issue body", "comment 3"
    source_line: int = 0
    source_first_line: str | None = None
    source_why: str | None = None
    witness: str | None = None  # for "no longer reproduces": what shows this script once failed
    # The change narrowed to nightlies and commits: "regressed in #12 (nightly ... passes, ... fails)",
    # and the probes behind it, one line per build tried.
    culprit: str | None = None
    culprit_evidence: list[str] = field(default_factory=list)
    # Further findings a run was asked for (`/scrub stress`: the failure rate and the time to the
    # first failure), one paragraph each, placed before the sign-off. Markdown the caller made
    # safe (`inline_code` for anything a repro printed); mentions are defused here.
    notes: list[str] = field(default_factory=list)
    # Markdown blocks made safe by their producers (the diagnosis, the offered test), in order.
    sections: list[str] = field(default_factory=list)


def render_issue_comment(comment: IssueComment) -> str:
    return _render("issue_comment.md.j2", c=comment)


@dataclass
class Notice:
    """A comment for a run that stops before running code."""

    kind: str  # one of NOTICE_KINDS
    detail: str = ""
    source_url: str | None = None
    run_url: str | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)  # review.Finding.to_dict()
    observed: str = ""  # inconclusive / passes-now: what the repro does now
    why: str = ""  # passes-now: why nothing witnesses a fix; inconclusive: why it cannot tell
    repro: str = ""  # which block ran ("the issue body by op, line 3: `x = ...`"), already safe


# The notices this module's template writes; each is a verdict a run stops at (a kind declares
# the ones its runs post: `Kind.notices`).
NOTICE_KINDS = (Verdict.screenshot_only, Verdict.unavailable_hardware, Verdict.inconclusive, Verdict.missing_dependency,
                Verdict.awaiting_approval, Verdict.passes_now, Verdict.needs_reproduction)


def render_notice(notice: Notice) -> str:
    if notice.kind not in NOTICE_KINDS:
        raise ValueError(f"unknown notice kind {notice.kind!r}; expected one of {NOTICE_KINDS}")
    return _render("issue_notice.md.j2", n=notice)


@dataclass
class StageLine:
    name: str
    status: str  # done, skipped, failed, waiting, running
    duration_s: float | None = None
    summary: str = ""


@dataclass
class Section:
    """An extra report section; `body` is markdown the caller already made safe."""

    title: str
    body: str


@dataclass
class RunReport:
    """The seed-002 report, for any pipeline. Untrusted strings are escaped when rendered,
    except `Section.body` (build it with `fence` / `no_mentions`)."""

    title: str
    status: str  # "Success", "Partial" or "Failed"
    summary: str = ""
    pr_url: str | None = None
    test_created: str | None = None
    changes: list[str] = field(default_factory=list)
    stages: list[StageLine] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    contacts: list[str] = field(default_factory=list)
    facts: list[tuple[str, str]] = field(default_factory=list)  # extra "- **name**: value" lines
    sections: list[Section] = field(default_factory=list)


REPORT_STATUSES = ("Success", "Partial", "Failed")


def render_run_report(report: RunReport) -> str:
    if report.status not in REPORT_STATUSES:
        raise ValueError(f"status must be one of {REPORT_STATUSES}, not {report.status!r}")
    return _render("run_report.md.j2", r=report)
