"""What the CI job (`ci_failure`) and the dispatch job (`improve`) are about: a `CIJob`.

Built from a `Run(kind=ci_failure)`'s params (app/engine/cilogs/README.md) or from dispatch
inputs, and kept in the pipeline state as a plain dict so every stage (on any worker) sees the
same: the repository, the failing commit, the failing test and the CI failure.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Any

from app.pipelines.state import from_known

_GPU_WORDS = ("cuda", "gpu", "nccl", "cudnn", "rocm")


@dataclass
class CIJob:
    repo: str
    head_sha: str = ""
    ref: str = ""  # a branch or tag to resolve when no commit is known (dispatch)
    test: str = ""  # the failing test id as CI printed it
    exception: str = ""
    message: str = ""
    kind: str = ""
    signature: str = ""
    job_name: str = ""
    run_url: str = ""
    base: str = "main"
    deterministic_hint: bool | None = None
    existing_test: str = ""
    prompt: str = ""
    classified: str = ""  # how the ingest classified the failure, and why it opened this job

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CIJob:
        return from_known(cls, data)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_failure(cls, repo: str, failure: dict[str, Any], workflow_run: dict[str, Any], **extra: Any) -> CIJob:
        """From a `Failure.to_dict()` and a workflow run's JSON (ingest params or a run URL)."""
        return cls(
            repo=repo,
            head_sha=workflow_run.get("head_sha", ""),
            test=failure.get("test", ""),
            exception=failure.get("exception", ""),
            message=failure.get("message", ""),
            kind=failure.get("kind", ""),
            signature=failure.get("signature", ""),
            job_name=failure.get("job", ""),
            run_url=workflow_run.get("html_url", ""),
            # The draft PR targets the default branch, whatever branch the failing run was on.
            base=workflow_run.get("default_branch") or "main",
            **extra,
        )

    @property
    def short_signature(self) -> str:
        if self.signature:
            return self.signature[:12]
        seed = f"{self.repo}\0{self.test}\0{self.exception}".encode()
        return hashlib.sha256(seed).hexdigest()[:12]

    @property
    def branch(self) -> str:
        return f"scrub/{self.short_signature}"

    @property
    def failure_line(self) -> str:
        return f"{self.exception}: {self.message}".strip(": ") or "a CI failure"

    @property
    def needs_gpu(self) -> bool:
        text = f"{self.job_name} {self.test} {self.exception} {self.message}".lower()
        return any(word in text for word in _GPU_WORDS)
