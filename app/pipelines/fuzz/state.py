"""The fuzz job's typed state: what it is about (`FuzzJob`) and what its stages found (`FuzzState`).

`FuzzState` is the fuzz pipeline's `PipelineState` (app.pipelines.state): every stage is
given `FuzzState.load(stored)` and returns outputs whose keys are its fields. It extends the
phased jobs' state (`PhasedState`: the phase clocks and the typed `Halt`). The job and the
per-device runs are typed; they are stored as the same JSON as before (`to_dict()`), so runs
stored by an earlier version load, and the status page and the CLI read the same keys.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, ClassVar

from app.engine.fuzz.config import FuzzConfig
from app.engine.diagnosis.model import DiagnosisReport
from app.pipelines.kit.phases import PHASED_DECODE, PhasedState
from app.pipelines.state import from_known


@dataclass
class FuzzJob:
    """A fuzz seed or a fuzzed program, for one repository at one commit."""

    repo: str
    seed: int | None = None
    program: str = ""  # a fuzzed program given as input (instead of a seed)
    ref: str = ""
    head_sha: str = ""
    base: str = "main"
    trigger: str = ""  # dispatch, comment, cli
    requested_by: str = ""
    issue: int | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FuzzJob:
        return from_known(cls, data)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def key(self) -> str:
        """`seed-42`, or a digest of the given program: names the branch and the test."""
        if self.seed is not None:
            return f"seed-{self.seed}"
        return "program-" + hashlib.sha256(self.program.encode()).hexdigest()[:10]

    @property
    def branch(self) -> str:
        return f"scrub/fuzz-{self.seed}" if self.seed is not None else f"scrub/fuzz-{self.key}"

    @property
    def label(self) -> str:
        return f"fuzz seed {self.seed}" if self.seed is not None else f"fuzzed program {self.key[8:]}"

    @property
    def test_name(self) -> str:
        return "test_fuzz_" + self.key.replace("-", "_")


@dataclass
class DeviceRun:
    device: str  # "" for a program that names no device
    fails: bool
    error: str  # "Class: message" of the failure as printed, "" when it passed
    output: str = ""
    seconds: float = 0.0  # how long the run took (what budgets the minimize stage's candidates)
    triage: dict[str, Any] = field(default_factory=dict)  # app.engine.fuzz.triage.Triage of a failure

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DeviceRun:
        return from_known(cls, data)

    def to_dict(self) -> dict[str, Any]:
        """As stored; the timing and the triage only when there are some (runs stored before
        they existed come back as the same JSON)."""
        data = asdict(self)
        for key in ("seconds", "triage"):
            if not data[key]:
                del data[key]
        return data


def _device_runs(items: list[dict[str, Any]]) -> list[DeviceRun]:
    return [DeviceRun.from_dict(item) for item in items]


@dataclass
class FuzzState(PhasedState):
    """The fuzz pipeline's state; each field is unset (its default) until its stage ran."""

    DECODE: ClassVar[dict[str, Callable[[Any], Any]]] = {
        **PHASED_DECODE, "job": FuzzJob.from_dict, "devices": _device_runs, "diagnosis": DiagnosisReport.from_dict}

    # inputs
    job: FuzzJob = field(default_factory=lambda: FuzzJob(repo=""))
    offline: bool = False  # the CLI: no GitHub, the branch is pushed to a local repository
    # checkout
    commit: str = ""  # the commit checked out
    config: dict[str, Any] = field(default_factory=dict)  # the repository's FuzzConfig, as a dict
    # fuzz
    program: str = ""  # the failing program (minimized once the minimize stage ran)
    original_program: str = ""
    fuzz_error: str = ""  # what the fuzzer said the program raised ("" when only its device was missing)
    fuzz_output: str = ""
    fuzz_triage: dict[str, Any] = field(default_factory=dict)  # the fuzzer's own failing run, triaged
    # reproduce
    error: str = ""  # the error reproduced (Class: message)
    exception: str = ""
    message: str = ""
    devices: list[DeviceRun] = field(default_factory=list)
    failing_devices: list[str] = field(default_factory=list)
    operations: list[str] = field(default_factory=list)  # the failing operators first (triage)
    tolerances: dict[str, float] = field(default_factory=dict)
    triage: dict[str, Any] = field(default_factory=dict)  # where it failed, torch bug or generator bug
    skipped_devices: dict[str, str] = field(default_factory=dict)  # device -> why this worker did not run it
    # minimize: {"lines": "12 -> 3 lines"}, or None when nothing smaller was kept
    minimized: dict[str, Any] | None = None
    # diagnose (`diagnosis.py`): the catalog's patterns and what their experiments showed
    diagnosis: DiagnosisReport | None = None
    # test
    generated: dict[str, Any] = field(default_factory=dict)  # path, name, marked, unmarked, style
    verification: dict[str, Any] = field(default_factory=dict)  # unmarked / marked: check_test results
    test_created: str = ""  # the test file's path
    # fix
    fix: dict[str, Any] = field(default_factory=dict)
    # publish
    branch: str = ""
    commits: list[str] = field(default_factory=list)
    pushed: bool = False
    lint: dict[str, Any] = field(default_factory=dict)  # per commit ("test", "fix"): lint_files results
    pr_url: str | None = None
    pr_number: int | None = None
    # report
    report_status: str = ""

    @property
    def fuzzer_command(self) -> str:
        """The repository's fuzzer command line with this job's seed in it, pinned as the job ran it."""
        if not self.config:
            return ""
        return FuzzConfig.from_dict(self.config).pinned_command.replace("{seed}", str(self.job.seed))

    @property
    def failed_in(self) -> str:
        """eager / compiled / compare / unknown: where the reproduced failure happened."""
        return str(self.triage.get("phase", "unknown"))

    @property
    def device_independent(self) -> bool:
        return [d.device for d in self.devices] == [""]

    def device_names(self) -> list[str]:
        return [d.device for d in self.devices if d.device]
