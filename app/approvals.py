"""An approval is of the exact code approved, not of a run's name.

A stage that waits for a person (the issue pipeline's `review`) writes the SHA-256 of the code
it would run into its output under `OUTPUT_KEY`. Approving (`/scrub approve`, the status page's
Approve, `POST /api/v1/runs/{id}/approve`) copies that digest into the run's params next to
`approved_by`; the stage later runs code only if the code's digest is the approved one. So when
the author edits the issue after the approval, a Retry (or a relabel that restarts a stranded
run) finds other code and waits for a new approval instead of running it.

Pure: the database layer (which records approvals) and the pipelines (which check them) both
use it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

OUTPUT_KEY = "approval_sha256"  # in the waiting stage's output: the digest of the code shown
BY, DIGEST = "approved_by", "approved_sha256"  # in the run's params
# What a trusted local caller (`scrub issue`, `scrub demo`: the operator's own process, never a
# webhook) puts under `DIGEST` to run whatever code the run selects.
ANY_CODE = "any code (a local run of the operator)"


def digest(source: str) -> str:
    """The hex SHA-256 of `source` (UTF-8; unpaired surrogates escaped, never an error)."""
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


def approved(params: Mapping[str, Any], source_digest: str) -> bool:
    """Whether the run's params approve the code whose digest is `source_digest`."""
    if not params.get(BY):
        return False
    recorded = params.get(DIGEST)
    return recorded == ANY_CODE or (isinstance(recorded, str) and recorded == source_digest)


def approve(params: Mapping[str, Any] | None, user: str, source_digest: str | None) -> dict[str, Any]:
    """The params with `user`'s approval of the code `source_digest` (None: the waiting stage
    named no code, e.g. a self-test gate: the approval is of the run)."""
    updated = {**(params or {}), BY: user}
    updated.pop(DIGEST, None)
    if source_digest:
        updated[DIGEST] = source_digest
    return updated


def trusted_local(user: str) -> dict[str, str]:
    """Params of a run the operator started on this machine: any code it selects may run."""
    return {BY: user, DIGEST: ANY_CODE}
