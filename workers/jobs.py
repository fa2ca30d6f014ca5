"""The trust split's protocol: what a trusted worker sends a repro worker, and what comes back.

The hosts that run untrusted code (the `repro-cpu` / `repro-gpu` queues) hold no GitHub
credential and no database URL. Their stages travel as messages through the broker,
ClusterFuzz's preprocess / main / postprocess:

1. A trusted worker (the `default` queue: database, GitHub App key) runs a run's pipeline
   until a stage asks for a repro queue. It records the handoff on the run (its lease now
   belongs to the job, `job:<job id>`) and sends a `ReproJob` (task `scrub.repro_job`) on
   that queue: the run's kind, params and the outputs of its finished stages, and, for the
   checkout, a clone URL that can only read the run's repository (App mode: an installation
   token scoped to that repository with `contents: read`, an hour long; token mode: none, a
   personal token cannot be scoped, so the fetch is anonymous).
2. The repro worker runs the stages of its queue on an in-memory context (no database, no
   GitHub beyond that clone URL) and, while it runs, sends a `Beat` every third of the lease
   on the broker's heartbeat queue (`workers/beats.py`; the reaper thread of each trusted
   worker renews the job's lease from it). At the end it sends one `ReproResult` (task
   `scrub.repro_result`, on `default`): the stage records, artifacts, log lines and how the
   job ended.
3. A trusted worker takes the run back only if it is still waiting on that very job (the job
   id is the lease owner: a cancelled, reaped or superseded job's result is dropped), checks
   every stage record against the pipeline (only stages the pipeline itself routes to the
   job's queue, in order, with outputs its state class accepts, within size bounds), records
   them, and goes on with the pipeline: the next stages run there, GitHub writes included.

Nothing here imports the database or GitHub: both sides read these classes, no side parses
the other's JSON by key.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

JOB_OWNER = "job:"  # the lease owner of a run whose stages are on a repro worker

# What a result may carry; a bigger one is refused whole (a repro's output is capped far
# below this by the sandbox; this bounds what a compromised repro host can make us store).
MAX_RESULT_BYTES = 16 << 20
MAX_LOG_LINES = 5000

OUTCOMES = ("handoff", "end", "wait", "failed")
END_STATUSES = ("succeeded", "failed", "skipped")


def new_job_id() -> str:
    return uuid.uuid4().hex


def job_owner(job_id: str) -> str:
    return f"{JOB_OWNER}{job_id}"


@dataclass(frozen=True)
class DoneStage:
    """A stage finished before the job: what a repro stage may read of it."""

    stage: str
    status: str
    summary: str
    output: dict[str, Any]
    seconds: float | None = None


@dataclass(frozen=True)
class ReproJob:
    """Trusted -> repro worker (on the stage's repro queue)."""

    job_id: str
    run_id: int
    kind: str
    queue: str
    stage: str  # the first stage to run
    params: dict[str, Any]
    installation_id: int | None
    done: list[DoneStage]
    repo: str = ""  # the only repository `clone_url` answers for
    clone_url: str | None = None  # None: GitHub is not configured on the trusted side
    lease_s: float = 60.0
    retries: int = 0  # jobs sent before this one for the same stage after transient errors

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReproJob:
        done = [DoneStage(**d) for d in data.get("done", [])]
        return cls(**{**data, "done": done})


@dataclass(frozen=True)
class StageRecord:
    """One stage the repro worker ran: as `RunContext.stage_finished` records it, with times
    (seconds since the epoch, the repro host's clock)."""

    stage: str
    status: str
    summary: str
    output: dict[str, Any]
    started: float
    ended: float


@dataclass(frozen=True)
class ReproResult:
    """Repro worker -> trusted (on `default`)."""

    job_id: str
    run_id: int
    stages: list[StageRecord] = field(default_factory=list)
    artifacts: list[tuple[str, str, str]] = field(default_factory=list)  # (name, kind, content)
    log: list[str] = field(default_factory=list)
    outcome: str = "handoff"  # handoff | end | wait | failed
    status: str | None = None  # `end`: the run's status
    verdict: str | None = None
    error: str | None = None  # `failed`: one line
    transient: bool = False  # `failed`: worth another job (the network, a lost connection)
    retries: int = 0  # the job's own `retries`

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReproResult:
        if len(json.dumps(data)) > MAX_RESULT_BYTES:
            raise ValueError(f"a repro result over {MAX_RESULT_BYTES >> 20} MB")
        stages = [StageRecord(**s) for s in data.get("stages", [])]
        artifacts = [tuple(a) for a in data.get("artifacts", [])]
        if any(len(a) != 3 or not all(isinstance(x, str) for x in a) for a in artifacts):
            raise ValueError("an artifact is (name, kind, content)")
        result = cls(**{**data, "stages": stages, "artifacts": artifacts})
        if result.outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {result.outcome!r}")
        if result.outcome == "end" and result.status not in END_STATUSES:
            raise ValueError(f"a job cannot end a run as {result.status!r}")
        if not isinstance(result.log, list) or len(result.log) > MAX_LOG_LINES:
            raise ValueError(f"a result's log is a list of at most {MAX_LOG_LINES} lines")
        return result


@dataclass(frozen=True)
class Beat:
    """Repro worker -> trusted, every third of the lease: the job is alive, at `stage`."""

    job_id: str
    run_id: int
    stage: str
    lease_s: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Beat:
        return cls(str(data["job_id"]), int(data["run_id"]), str(data["stage"]), float(data["lease_s"]))


def bounded(result: ReproResult) -> ReproResult:
    """`result`, or a failed one saying why when it is too big to be recorded."""
    if len(json.dumps(result.to_dict())) <= MAX_RESULT_BYTES and len(result.log) <= MAX_LOG_LINES:
        return result
    return ReproResult(result.job_id, result.run_id, outcome="failed", retries=result.retries,
                       error=f"the repro job's result was over {MAX_RESULT_BYTES >> 20} MB or "
                             f"{MAX_LOG_LINES} log lines; nothing of it was recorded")
