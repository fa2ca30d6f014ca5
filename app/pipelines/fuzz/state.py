"""The fuzz job's typed state: what it is about (`FuzzJob`) and what its stages found (`FuzzState`).

The pipeline runner keeps a plain dict (stage outputs merge into it, and a retried stage's
stored output comes back from the database as JSON); `FuzzState.of(state)` gives stages a
typed view of it, and each stage returns plain dicts made by `to_dict()`.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field, fields
from typing import Any


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in (data or {}).items() if k in names}


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
        return cls(**_known(cls, data))

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
    error: str  # "Class: message" of the failure, "" when it passed
    output: str = ""


@dataclass
class FuzzState:
    """A typed view of the pipeline state (every field optional until its stage ran)."""

    job: FuzzJob
    config: dict[str, Any] = field(default_factory=dict)
    program: str = ""  # the failing program (minimized once the minimize stage ran)
    original_program: str = ""
    fuzz_error: str = ""  # what the fuzzer said the program raised
    fuzz_output: str = ""
    error: str = ""  # the error reproduced (Class: message)
    exception: str = ""
    devices: list[DeviceRun] = field(default_factory=list)
    failing_devices: list[str] = field(default_factory=list)
    operations: list[str] = field(default_factory=list)
    tolerances: dict[str, float] = field(default_factory=dict)
    generated: dict[str, Any] = field(default_factory=dict)  # path, name, marked, unmarked, style
    verification: dict[str, Any] = field(default_factory=dict)
    fix: dict[str, Any] = field(default_factory=dict)
    halt: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, state: dict[str, Any]) -> FuzzState:
        data = _known(cls, state)
        data["job"] = FuzzJob.from_dict(state.get("job") or {"repo": ""})
        data["devices"] = [DeviceRun(**d) for d in state.get("devices") or []]
        return cls(**data)

    @property
    def device_independent(self) -> bool:
        return [d.device for d in self.devices] == [""]

    def device_names(self) -> list[str]:
        return [d.device for d in self.devices if d.device]
