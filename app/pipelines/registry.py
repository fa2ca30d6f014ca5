"""Which stages a run of each kind goes through.

Pipeline modules are imported by name when a run needs them, so a worker starts (and the other
kinds keep working) even when one pipeline module is missing or broken; such a run fails with
a `PipelineUnavailable` that says which module and why.
"""

from __future__ import annotations

import importlib

from app.pipelines.base import Stage

PIPELINE_MODULES: dict[str, str] = {
    "issue": "app.pipelines.issue.stages",
    "ci_ingest": "app.pipelines.ci.ingest",
    "ci_failure": "app.pipelines.ci.stages",
    "improve": "app.pipelines.ci.improve",
    "fuzz": "app.pipelines.fuzz.stages",
    # A two-stage pipeline with no dependencies: smoke-tests a deployment's queues and workers.
    "selftest": "app.pipelines.selftest",
}


class PipelineUnavailable(LookupError):
    """No pipeline can run this kind of run (unknown kind, module missing or broken)."""


def stages_for(kind: str) -> list[Stage]:
    module_name = PIPELINE_MODULES.get(kind)
    if module_name is None:
        raise PipelineUnavailable(f"no pipeline for run kind {kind!r} (known: {', '.join(PIPELINE_MODULES)})")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise PipelineUnavailable(f"pipeline module {module_name} for kind {kind!r} cannot be imported: {exc}") from exc
    stages = getattr(module, "STAGES", None)
    if not isinstance(stages, (list, tuple)) or not all(isinstance(s, Stage) for s in stages):
        raise PipelineUnavailable(f"{module_name}.STAGES is not a list of Stage")
    return list(stages)


def stage_names(kind: str) -> list[str]:
    """The stage names of a kind in order; empty when its pipeline is unavailable."""
    try:
        return [stage.name for stage in stages_for(kind)]
    except PipelineUnavailable:
        return []
