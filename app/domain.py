"""The vocabulary every layer shares: run and stage statuses, verdicts, run kinds, queues, commands.

Plain enums and frozen dataclasses, no imports from the project. The database stores these
values, the GitHub router produces commands, pipelines return stage statuses and the API shows
them: one definition each, here (import-linter keeps this module free of every other layer).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


def utcnow() -> datetime:
    """Aware UTC now (sqlmodel's datetime columns refuse naive values)."""
    return datetime.now(UTC)


def from_known(cls: type[T], data: Mapping[str, Any] | None) -> T:
    """`cls` (a dataclass) from stored JSON: the fields that are there, the rest at their defaults
    (a key written by older or newer code is ignored, so stored records keep loading)."""
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    return cls(**{k: v for k, v in (data or {}).items() if k in names})


class RunStatus(StrEnum):
    queued = "queued"
    running = "running"
    awaiting_approval = "awaiting_approval"
    succeeded = "succeeded"
    failed = "failed"
    skipped = "skipped"
    cancelled = "cancelled"


FINISHED = frozenset({RunStatus.succeeded, RunStatus.failed, RunStatus.skipped, RunStatus.cancelled})
ACTIVE = (RunStatus.queued, RunStatus.running, RunStatus.awaiting_approval)


class StageStatus(StrEnum):
    """What a stage event records. `done` and `skipped` count as finished on a retry."""

    running = "running"
    done = "done"
    skipped = "skipped"
    failed = "failed"
    waiting = "waiting"


STAGE_FINISHED = frozenset({StageStatus.done, StageStatus.skipped})


@dataclass(frozen=True)
class StageSummary:
    """A stage's latest event as the run report's execution log shows it."""

    stage: str
    status: str
    summary: str = ""
    duration_s: float | None = None


WORKER_LOST = "worker lost"  # how a stage event whose worker vanished mid-stage begins (`app.db.leases`)


def failed_on_their_own(summaries: Iterable[StageSummary]) -> set[str]:
    """The stages whose latest event is a failure of their own. A run goes on without those that
    are optional, and does not run them again on resume (`app.pipelines.base.run_pipeline`); a
    stage whose worker was lost (a restart, an out-of-memory kill) is not one: it runs again."""
    return {s.stage for s in summaries if s.status == StageStatus.failed and not s.summary.startswith(WORKER_LOST)}


class Verdict(StrEnum):
    """The issue pipeline's verdict words: the run's `verdict` and its state's, the comment and
    labels chosen for each (app/pipelines/issue/report.py), the notices."""

    # triage decisions that stop the run before any code runs (app.engine.issue.triage)
    closed = "closed"
    duplicate = "duplicate"
    feature = "feature"
    better_engineering = "better-engineering"
    documentation = "documentation"
    tracker = "tracker"
    needs_reproduction = "needs-reproduction"
    screenshot_only = "screenshot-only"
    unavailable_hardware = "unavailable-hardware"
    # what running the repro showed (app.engine.verdict.classify)
    reproduces = "reproduces"
    fixed = "fixed"
    different_error = "different-error"
    inconclusive = "inconclusive"
    missing_dependency = "missing-dependency"
    # it passes now, but nothing witnesses that the script once showed the bug (no close)
    passes_now = "passes-now"
    # where the run stands
    awaiting_approval = "awaiting-approval"
    ignored = "ignored"


class RerunVerdict(StrEnum):
    """What a CI failure's reruns in the sandbox say (app.engine.verdict.rerun): the CI job's verdict."""

    deterministic = "deterministic"
    flaky = "flaky"
    not_reproducible = "not_reproducible"
    cannot_run = "cannot_run"


class RunKind(StrEnum):
    issue = "issue"  # scrub an issue (label or /scrub command)
    ci_ingest = "ci_ingest"  # read a failed workflow run's logs
    ci_failure = "ci_failure"  # reproduce a repeated CI failure
    improve = "improve"  # workflow_dispatch of the scrub workflow
    fuzz = "fuzz"  # TorchFuzz seed -> failing test
    selftest = "selftest"  # smoke test of a deployment's queues
    progression = "progression"  # re-check an open bug Scrubbot found reproducing (new build, periodic)


class Queue(StrEnum):
    default = "default"  # GitHub I/O and bookkeeping
    cpu = "repro-cpu"  # sandboxed runs
    gpu = "repro-gpu"  # sandboxed runs that need CUDA; only GPU hosts consume it


DEFAULT_QUEUE, CPU_QUEUE, GPU_QUEUE = Queue.default.value, Queue.cpu.value, Queue.gpu.value
QUEUES = (DEFAULT_QUEUE, CPU_QUEUE, GPU_QUEUE)

def parse_environments(spec: str | dict[str, str] | None, default_python: str) -> dict[str, str]:
    """`"2.11=/envs/a/bin/python,2.13=/envs/b/bin/python"` (or a dict) -> {label: python}, in order.

    Empty input means `default_python` under the label `local`. A malformed entry raises
    ValueError naming it (settings validation shows it; the engine wraps it).
    """
    if isinstance(spec, dict):
        envs = {str(k).strip(): str(v).strip() for k, v in spec.items()}
    else:
        envs = {}
        for item in filter(None, (part.strip() for part in (spec or "").split(","))):
            label, sep, python = item.partition("=")
            if not sep or not label.strip() or not python.strip():
                raise ValueError(f"environment entry {item!r} is not LABEL=PYTHON")
            envs[label.strip()] = python.strip()
    if any(not label or not python for label, python in envs.items()):
        raise ValueError("environment labels and interpreter paths must be non-empty")
    return envs or {"local": default_python}


# --- `/scrub` commands ----------------------------------------------------------------------
#
# The words are the run kinds' (each kind's package declares its words, their help and their
# rule: app/pipelines/commands.py). Here is only what every layer passes around: the comment's
# word as typed (the webhook router knows no words), the request the worker checks, and the
# actions the database layer applies once the worker has resolved a word.


COMMAND_WORD_MAX = 40


@dataclass(frozen=True)
class Command:
    """A `/scrub` comment's first line: the word after `/scrub` (lowercased; "" when none)."""

    word: str = ""
    args: str = field(default="", compare=False)  # the rest of the line (`/scrub fuzz 42` -> "42")


def parse_command(body: str | None) -> Command | None:
    """The command on the first line of a comment, or None when it is not a `/scrub` comment."""
    first_line = (body or "").strip().splitlines()[0] if (body or "").strip() else ""
    words = first_line.split()
    if not words or words[0].lower() != "/scrub":
        return None
    # The word travels as typed (queue, delivery record, reply): bounded, whoever typed it.
    return Command(words[1].lower()[:COMMAND_WORD_MAX] if len(words) > 1 else "", " ".join(words[2:])[:200])


@dataclass(frozen=True)
class CommandRequest:
    """A `/scrub` command on an issue: who asked, where. The worker checks the permission."""

    command: str  # the word as typed; the worker resolves it (an unknown word gets the help)
    repo: str
    issue: int
    user: str
    installation_id: int | None = None
    issue_url: str = ""
    args: str = ""  # what followed the command word (the seed of `/scrub fuzz <seed>`)


class Lifecycle(StrEnum):
    """What a command may do to the issue's latest run of a kind."""

    approve = "approve"  # the run awaiting approval goes on
    retry = "retry"  # the finished run starts over under the same id
    cancel = "cancel"  # the unfinished run stops


@dataclass(frozen=True)
class NewRun:
    """A run a command creates."""

    kind: str
    target: str
    trigger: str
    params: dict[str, Any]
    started: str = "run {id} started"  # the reply, with the new run's id


@dataclass(frozen=True)
class CreateRun:
    """Start `run`, whatever the issue's runs."""

    run: NewRun


@dataclass(frozen=True)
class RerunFrom:
    """Set `flag` on the issue's latest run of `kind` and redo `stage` and every stage after it
    (`stages`: the kind's stages in order); with no run yet, create `otherwise`."""

    kind: str
    stage: str
    flag: str
    stages: tuple[str, ...]
    otherwise: NewRun


@dataclass(frozen=True)
class ActOnLatest:
    """`action` on the issue's latest run of `kind` (awaiting approval, for `approve`); with no
    run, create `otherwise` when given."""

    action: Lifecycle
    kind: str
    otherwise: NewRun | None = None


@dataclass(frozen=True)
class Refuse:
    """Change nothing and say why (a command with bad arguments: its usage)."""

    message: str


CommandAction = CreateRun | RerunFrom | ActOnLatest | Refuse


# --- CI failure signatures ------------------------------------------------------------------


class FailureLike(Protocol):
    """The fields of a CI failure (`app.engine.cilogs.Failure`) a signature store keeps."""

    signature: str
    test: str
    job: str
    kind: str
    exception: str
    message: str


@dataclass(frozen=True)
class Observation:
    """A fingerprint's standing after one workflow run was counted."""

    fingerprint: str
    count: int  # distinct workflow runs it failed in
    workflow_run_ids: tuple[int, ...]
    linked_run_id: int | None  # the CI run opened for it, if any
    first_seen: datetime
    last_seen: datetime

    def should_open(self, threshold: int) -> bool:
        return self.linked_run_id is None and self.count >= threshold


class SignatureStore(Protocol):
    def observe(self, repo: str, failure: FailureLike, workflow_run_id: int) -> Observation:
        """Count `failure` for `workflow_run_id` (idempotent per run id) and return its standing."""

    def open_ci_run(
        self, repo: str, fingerprint: str, *, target: str, params: dict[str, Any], installation_id: int | None = None
    ) -> int | None:
        """Create one `ci_failure` run and link it to the fingerprint; None when one is linked already."""


@dataclass(frozen=True)
class TrackedBug:
    """An open bug progression re-checks: an issue Scrubbot found reproducing, or the draft PR
    of a generated test. `state` is the latest conclusive answer (`reproduces`, `passes-now`,
    `fixed`, `closed`); `build` the build it came from; `last_check_*` the latest re-check,
    whatever it said. The database derives it from the runs (`app.db.progression`)."""

    repo: str
    number: int
    target: str  # "issue" or "pull"
    source_run: int  # the issue (or CI job) run that found it
    state: str
    title: str = ""
    build: str = ""  # the build the state was seen on
    installation_id: int | None = None
    last_check_run: int | None = None
    last_check_at: datetime | None = None
    last_check_verdict: str | None = None
    last_check_build: str = ""  # the build the latest re-check ran on
    active_run: int | None = None  # a re-check queued or running now

    @property
    def open(self) -> bool:
        """Still to be re-checked: it reproduced (or passes with nothing to witness a fix)."""
        return self.state in (Verdict.reproduces, Verdict.passes_now)
