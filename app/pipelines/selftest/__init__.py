"""`selftest`: a pipeline with no dependencies that smoke-tests a deployment's queues (`stages.py`)."""

from app.domain import RunKind
from app.pipelines.kind import Kind
from app.pipelines.selftest.stages import STAGES
from app.pipelines.state import PlainState

KIND = Kind(name=RunKind.selftest, stages=tuple(STAGES), state=PlainState)
