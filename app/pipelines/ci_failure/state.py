"""The CI job's typed state (`ci_failure`, `improve`), and the two functions of it every stage uses.

Stored as JSON by the runner (app.pipelines.state); the JSON keys and shapes are the ones
the status page (`app/web/figures.py`: `rerun`, `rerun_output`), `/metrics` (`app/db/stats.py`:
`rerun`) and the run list (`pr_url`) read, so a field here is renamed only with its readers.
`rerun` is `app.runstate.RerunSummary`, the class those readers read it through (`RunView`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from app.engine.diagnosis.model import DiagnosisReport
from app.pipelines.base import CPU_QUEUE, GPU_QUEUE
from app.pipelines.ci_failure.job import CIJob
from app.pipelines.kit.phases import PHASED_DECODE, PhasedState
from app.pipelines.kit.xfail import XfailCheck
from app.runstate import RerunSummary

Json = dict[str, Any]


@dataclass(frozen=True)
class GeneratedFile:
    """A test the job wrote into the checkout: a reproduction test or a stress test."""

    path: str
    source: str
    kind: str  # "repro" or "stress"
    unmarked: str = ""  # the same file without the expected-failure marker (the fix commit), when known
    note: str = ""  # how it was made: "copied from the failing test", or why not

    @property
    def is_stress(self) -> bool:
        return self.kind == "stress"

    @property
    def described(self) -> str:
        return "stress test" if self.is_stress else "reproduction test"

    def to_dict(self) -> Json:
        data = asdict(self)
        for key in ("unmarked", "note"):  # newer keys: only when set (runs stored before lack them)
            if not data[key]:
                del data[key]
        return data

    @classmethod
    def from_dict(cls, data: Json) -> GeneratedFile:
        return cls(path=data["path"], source=data["source"], kind=data.get("kind", "repro"),
                   unmarked=data.get("unmarked", ""), note=data.get("note", ""))


@dataclass(frozen=True)
class FixAttempt:
    """What the operator's fix command changed, and whether the sandbox reruns confirm it."""

    command_exit: int
    log: str
    patch: str
    verified: bool
    summary: str
    runs: int = 0
    wanted_runs: int = 0

    def to_dict(self) -> Json:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Json) -> FixAttempt:
        return cls(**{k: data[k] for k in ("command_exit", "log", "patch", "verified", "summary", "runs",
                                             "wanted_runs") if k in data})


@dataclass
class CIState(PhasedState):
    """`ci_failure` and `improve`: the job, the checkout, the reruns, the test, the fix, the PR."""

    DECODE = {**PHASED_DECODE, "job": CIJob.from_dict, "generated": GeneratedFile.from_dict,
              "verification": XfailCheck.from_dict, "fix": FixAttempt.from_dict, "rerun": RerunSummary.from_dict,
              "diagnosis": DiagnosisReport.from_dict}

    job: CIJob | None = None
    failures_found: int = 0  # improve: failures in the given logs
    # checkout
    worktree: str = ""
    commit: str = ""
    node_id: str = ""
    test_file: str = ""
    owners: list[str] = field(default_factory=list)
    authors: list[str] = field(default_factory=list)
    # rerun: `app.engine.verdict.rerun.Sequential.summary()` (runs, failures, rate, interval, ...)
    rerun: RerunSummary = field(default_factory=lambda: RerunSummary.from_dict({}))  # {} until the reruns ran
    rerun_output: str = ""
    verdict: str | None = None
    hint_confirmed: bool | None = None
    # diagnose (`diagnosis.py`): the catalog's patterns and what their experiments showed
    diagnosis: DiagnosisReport | None = None
    # test
    generated: GeneratedFile | None = None
    verification: XfailCheck | None = None
    test_created: str = ""
    stress: Json = field(default_factory=dict)  # measurement, budget, knobs, described (or output)
    # fix, publish, report
    fix: FixAttempt | None = None
    branch: str = ""
    commits: list[str] = field(default_factory=list)
    pushed: bool = False
    pr_url: str | None = None
    pr_number: int | None = None
    report_status: str = ""


def job_of(state: CIState) -> CIJob:
    """The job; every stage after the first runs only once the first stage made it."""
    if state.job is None:
        raise RuntimeError("the CI job's state has no job (its first stage has not run)")
    return state.job


def repro_queue(state: CIState) -> str:
    """repro-gpu when the failure names CUDA/GPU (job name, test id or message), else repro-cpu."""
    return GPU_QUEUE if state.job is not None and state.job.needs_gpu else CPU_QUEUE
