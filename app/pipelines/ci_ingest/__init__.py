"""`ci_ingest`: a failed workflow run -> its failing tests, counted; a `ci_failure` run when one
repeats (`stages.py`). Started by the `workflow_run` webhook. `app/engine/cilogs/README.md`.
"""

from app.domain import RunKind
from app.pipelines.ci_ingest.stages import STAGES
from app.pipelines.ci_ingest.state import IngestState
from app.pipelines.kind import Kind

KIND = Kind(name=RunKind.ci_ingest, stages=tuple(STAGES), state=IngestState)
