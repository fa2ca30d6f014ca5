"""`progression`: re-check an open bug Scrubbot found reproducing, on each new build and periodically.

A run re-checks one tracked bug (`app.db.progression`): an issue whose repro reproduced, or a
draft PR whose generated test failed. Runs are started by the scheduler (`schedule.py`, called
by `workers/schedule.py`), never by a command. `stages.py` says what a re-check does; a change of
state gets one comment, a fix (with its witness) closes the issue or PR and names the PR that
fixed it when builds allow (`app.pipelines.kit.culprit`).
"""

from app.domain import RunKind, Verdict
from app.pipelines.kind import Kind
from app.pipelines.progression.stages import NEXT_STEPS, STAGES
from app.pipelines.progression.state import ProgressionState

KIND = Kind(
    name=RunKind.progression,
    stages=tuple(STAGES),
    state=ProgressionState,
    notices=(),
    next_steps={str(k): v for k, v in NEXT_STEPS.items()},
)

__all__ = ["KIND", "Verdict"]
