"""The registry: every `RunKind` is declared by its package, and a broken kind stops only itself."""

from __future__ import annotations

import importlib

import pytest

from app.domain import RunKind
from app.engine.report.render import Notice, render_notice
from app.pipelines import registry
from app.pipelines.kind import Kind
from app.pipelines.state import PlainState


def test_every_run_kind_is_declared_by_the_package_named_after_it():
    for kind in RunKind:
        declared = registry.kind(kind.value)
        assert isinstance(declared, Kind) and declared.name == kind and declared.stages
        home = registry.DECLARED_BY.get(kind, kind)
        assert registry.PIPELINE_MODULES[kind.value] == f"app.pipelines.{home.value}"


def test_a_package_declares_only_run_kinds_that_are_its_own():
    for package in sorted(set(registry.PIPELINE_MODULES.values())):
        for declared in registry.declared(importlib.import_module(package)):
            assert declared.name in RunKind.__members__.values()
            assert registry.PIPELINE_MODULES[declared.name] == package


def test_a_kinds_stages_share_its_state_and_have_distinct_names():
    for kind in registry.kinds():
        assert len(set(kind.stage_names)) == len(kind.stages), kind.name
        assert all(stage.state is kind.state for stage in kind.stages) or kind.state is PlainState, kind.name


def test_the_notices_a_kind_posts_are_ones_the_engine_renders():
    for kind in registry.kinds():
        for notice in kind.notices:
            assert render_notice(Notice(notice, detail="x")).strip(), (kind.name, notice)


def test_a_broken_kind_fails_alone(monkeypatch):
    monkeypatch.setitem(registry.PIPELINE_MODULES, "fuzz", "app.pipelines.not_written_yet")
    with pytest.raises(registry.PipelineUnavailable, match="not_written_yet"):
        registry.stages_for("fuzz")
    assert registry.stage_names("fuzz") == []
    assert [k.name for k in registry.kinds()] == [k for k in RunKind if k != RunKind.fuzz]
    with pytest.raises(registry.PipelineUnavailable, match="no pipeline for run kind 'nope'"):
        registry.kind("nope")


def test_the_reports_execution_log_orders_stages_as_the_kinds_run_them():
    """`STAGE_ORDER` of the CI and fuzz reports is still written out: it must follow the kinds."""
    from app.pipelines.ci_failure import report as ci_report
    from app.pipelines.fuzz import report as fuzz_report

    for names, order in [(registry.kind("ci_failure").stage_names, ci_report.STAGE_ORDER),
                         (registry.kind("improve").stage_names, ci_report.STAGE_ORDER),
                         (registry.kind("fuzz").stage_names, fuzz_report.STAGE_ORDER)]:
        assert [n for n in order if n in names] == list(names)


def test_the_import_contracts_name_every_kind_package():
    """pyproject.toml's independence and kit contracts list the kind packages: none is left out."""
    import tomllib
    from pathlib import Path

    contracts = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    packages = set(registry.PIPELINE_MODULES.values())
    independent = [c for c in contracts if c["type"] == "independence" and "app.pipelines.issue" in c["modules"]]
    kit = [c for c in contracts if c["type"] == "forbidden" and "app.pipelines.kit" in c["source_modules"]]
    assert [set(c["modules"]) for c in independent] == [packages]
    assert [set(c["forbidden_modules"]) for c in kit] == [packages]


def test_every_kind_ends_alike_publish_then_report():
    """One stage order for every kind: what goes out (`publish`) before the run's own record
    (`report`), which is last."""
    ending = {kind.name: [n for n in kind.stage_names if n in ("publish", "report")] for kind in registry.kinds()
              if kind.name != RunKind.selftest}  # a smoke test: greet, work, report
    assert {name: names for name, names in ending.items() if names} == {
        RunKind.issue: ["publish", "report"], RunKind.ci_failure: ["publish", "report"],
        RunKind.improve: ["publish", "report"], RunKind.fuzz: ["publish", "report"],
        RunKind.progression: ["publish", "report"]}
    for kind in registry.kinds():
        if "report" in kind.stage_names and kind.name != RunKind.selftest:
            assert kind.stage_names[-1] == "report", kind.name
