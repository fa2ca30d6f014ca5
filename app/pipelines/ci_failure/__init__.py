"""`ci_failure`: a repeated CI failure -> verdict, test, draft PR, report (seed 002); and `improve`,
the `workflow_dispatch` of the repository's scrub workflow, which runs the same work stages from
its own inputs (`improve.py`). `docs/ci-job.md`.

`ci_failure` runs are opened by the `ci_ingest` kind (through the `SignatureStore` port, never
by importing it); `improve` runs by the webhook router.
"""

from app.domain import RunKind
from app.pipelines.ci_failure import improve
from app.pipelines.ci_failure.stages import STAGES
from app.pipelines.ci_failure.state import CIState
from app.pipelines.kind import Kind

KIND = Kind(name=RunKind.ci_failure, stages=tuple(STAGES), state=CIState)
IMPROVE = Kind(name=RunKind.improve, stages=tuple(improve.STAGES), state=CIState)
KINDS = (KIND, IMPROVE)
