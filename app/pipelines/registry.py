"""The run kinds, found by name: each `RunKind` is declared by the package named after it.

A kind's package is imported when something needs it (a run of that kind, the command words,
the help), so a worker starts, and the other kinds keep working, even when one kind's package is
missing or broken: its runs fail with a `PipelineUnavailable` that says which package and why,
and its command words are left out of the help.
"""

from __future__ import annotations

import importlib
import logging

from app.domain import RunKind
from app.pipelines.base import Stage
from app.pipelines.kind import Kind

log = logging.getLogger(__name__)

# A kind lives in `app.pipelines.<kind>`; `improve` (the workflow_dispatch job) is declared by
# `ci_failure`, whose work stages it runs.
DECLARED_BY = {RunKind.improve: RunKind.ci_failure}
PIPELINE_MODULES: dict[str, str] = {
    kind.value: f"app.pipelines.{DECLARED_BY.get(kind, kind).value}" for kind in RunKind
}


class PipelineUnavailable(LookupError):
    """No pipeline can run this kind of run (unknown kind, package missing or broken)."""


def declared(module: object) -> tuple[Kind, ...]:
    """The kinds a package declares: `KIND`, and for a package with several, `KINDS`."""
    kinds = getattr(module, "KINDS", None)
    if kinds is None:
        kinds = (getattr(module, "KIND", None),)
    return tuple(kinds)


def kind(name: str) -> Kind:
    module_name = PIPELINE_MODULES.get(name)
    if module_name is None:
        raise PipelineUnavailable(f"no pipeline for run kind {name!r} (known: {', '.join(PIPELINE_MODULES)})")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise PipelineUnavailable(f"pipeline module {module_name} for kind {name!r} cannot be imported: {exc}") from exc
    found = next((k for k in declared(module) if isinstance(k, Kind) and k.name == name), None)
    if found is None:
        raise PipelineUnavailable(f"{module_name} declares no KIND named {name!r}")
    if not all(isinstance(s, Stage) for s in found.stages):
        raise PipelineUnavailable(f"{module_name}: the stages of {name!r} are not all Stage")
    return found


def kinds() -> list[Kind]:
    """Every kind that can be loaded, in `RunKind` order; a broken one is logged and left out."""
    loaded = []
    for name in PIPELINE_MODULES:
        try:
            loaded.append(kind(name))
        except PipelineUnavailable as exc:
            log.warning("run kind %s is unavailable: %s", name, exc)
    return loaded


def stages_for(name: str) -> list[Stage]:
    return list(kind(name).stages)


def stage_names(name: str) -> list[str]:
    """The stage names of a kind in order; empty when its pipeline is unavailable."""
    try:
        return list(kind(name).stage_names)
    except PipelineUnavailable:
        return []
