"""The plain data of CI log ingest: a failure, a job, a report. Re-exported by `cilogs`."""

from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any

from app.domain import from_known

KINDS = ("exception", "assertion", "timeout", "signal", "exit")

MAX_MESSAGE_CHARS = 2000
MAX_MESSAGE_LINES = 12
MAX_EXCERPT_CHARS = 8000
MAX_LINE_CHARS = 400


@dataclass(frozen=True)
class Failure:
    """One failing test (or one failed job step with no test) found in a CI log.

    `signature` is the CI fingerprint (`fingerprint.ci_fingerprint`), "" until fingerprinted.
    `hint`/`diagnosis` come from the error-pattern catalog (`diagnose`), "" when none applies.
    """

    job: str
    test: str
    kind: str  # one of KINDS
    exception: str
    message: str
    signature: str = ""
    excerpt: str = ""
    hint: str = ""
    diagnosis: str = ""
    source: str = ""  # pytest | unittest | gtest | timeout | crash | traceback | exit

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Failure:
        return from_known(cls, data)


@dataclass
class JobLog:
    """A job of the run as seen in its log."""

    name: str
    lines: int = 0
    exit_code: int | None = None
    failures: int = 0
    source: str = ""  # the archive member(s) read: "3_build.txt" or "build/*.txt"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class LogReport:
    jobs: list[JobLog] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"jobs": [j.to_dict() for j in self.jobs], "failures": [f.to_dict() for f in self.failures]}


class Excerpt:
    """A bounded excerpt: the first `head` lines, then the last `tail`, with a gap marker."""

    def __init__(self, head: int = 40, tail: int = 30) -> None:
        self.head: list[str] = []
        self.tail: deque[str] = deque(maxlen=tail)
        self.head_size = head
        self.dropped = 0

    def add(self, line: str) -> None:
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + " …"
        if len(self.head) < self.head_size:
            self.head.append(line)
            return
        if len(self.tail) == self.tail.maxlen:
            self.dropped += 1
        self.tail.append(line)

    def text(self) -> str:
        lines = list(self.head)
        if self.dropped:
            lines.append(f"[… {self.dropped} lines omitted …]")
        lines.extend(self.tail)
        return bound_text("\n".join(lines).strip("\n"), MAX_EXCERPT_CHARS)


def bound_text(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 2] + " …"


def bound_message(lines: list[str]) -> str:
    kept = [ln.rstrip() for ln in lines[:MAX_MESSAGE_LINES]]
    return bound_text("\n".join(kept).strip(), MAX_MESSAGE_CHARS)


@dataclass
class Draft:
    """A failure being assembled from the several places a log reports it."""

    test: str
    kind: str = ""
    exception: str = ""
    message: str = ""
    source: str = ""
    rank: int = 0
    excerpts: list[str] = field(default_factory=list)

    def merge(self, kind: str, exception: str, message: str, *, source: str, rank: int, excerpt: str = "") -> None:
        if self.kind not in ("timeout", "signal") and kind and (rank >= self.rank or not self.kind):
            self.kind = kind
        if (exception or message) and (rank > self.rank or not (self.exception or self.message)):
            if kind != "timeout" or not self.exception:
                self.exception = exception or self.exception
            self.message = message or self.message
        if rank > self.rank or not self.source:
            self.source = source
        self.rank = max(self.rank, rank)
        if excerpt and excerpt not in self.excerpts and len(self.excerpts) < 3:
            self.excerpts.append(excerpt)

    @property
    def excerpt(self) -> str:
        return bound_text("\n\n".join(self.excerpts), MAX_EXCERPT_CHARS)
