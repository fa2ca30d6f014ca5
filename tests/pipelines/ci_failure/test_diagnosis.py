"""The CI job's `diagnose` stage: the failing test file is the subject, each variant replaces it
for one `pytest <node>` run over the checkout, the reruns' rule judges it, and the reproduce
phase bounds the time. The sandbox is stood in for here (the real one: tests/pipelines/kit)."""

from __future__ import annotations

from app.engine.diagnosis.model import Observation
from app.pipelines.base import run_pipeline
from app.pipelines.ci_failure import diagnosis
from app.pipelines.ci_failure.stages import STAGES
from app.pipelines.ci_failure.state import CIState
from tests.fakes.ci_project import FLAKY_TEST
from tests.pipelines.conftest import ci_params


class FakeVariants:
    """Every variant passes every run; records what it was asked."""

    made: list = []

    def __init__(self, runner, path, argv, judge):
        FakeVariants.made.append((path, argv))
        self.labels: list[str] = []

    def __call__(self, variant, timeout_s):
        return [Observation("passed", False, "passed") for _ in range(variant.runs)]


def test_a_flaky_ci_failure_runs_the_nondeterminism_experiments_on_its_test_file(ci_world, monkeypatch):
    monkeypatch.setattr(diagnosis, "TreeVariantRunner", FakeVariants)
    params = ci_params(ci_world.project, FLAKY_TEST, "AssertionError", "cache returned a stale entry")
    ctx = ci_world.context(params, experiments_budget_s=240)
    run_pipeline(STAGES[:2], ctx, any_queue=True)  # job, checkout
    state = CIState.load({k: v for out in ctx.completed_stages().values() for k, v in out.items()}
                         | {"verdict": "flaky", "rerun": {"runs": 10, "failures": 3}, "rerun_output": "1 failed"})
    done = diagnosis.diagnose_stage(ctx, state)
    report = done.output["diagnosis"]
    assert FakeVariants.made == [("tests/test_cache.py", ["-m", "pytest", "-q", "-rfExX", "-p", "no:cacheprovider",
                                                          "tests/test_cache.py::test_cache_refresh"])]
    assert report.patterns == ["nondeterminism"]
    lines = {f.experiment: f.line for f in report.findings}
    assert lines["one_thread"].startswith("one thread (torch.set_num_threads(1)): no run fails (0/")
    assert lines["hash_seed"].startswith("PYTHONHASHSEED=0: no run fails")  # CI runs do not pin it
    assert done.summary.startswith("nondeterminism: 4 experiments ran")
    assert report.next_step.startswith("Pin PYTHONHASHSEED")


def test_no_experiments_when_the_phase_has_no_time_left(ci_world):
    params = ci_params(ci_world.project, FLAKY_TEST, "AssertionError", "stale")
    ctx = ci_world.context(params, phase_reproduce_s=5, experiments_budget_s=240)
    state = CIState.load({"job": {"repo": ci_world.project.repo, "test": FLAKY_TEST},
                          "phase_reproduce_started": 0.0})
    done = diagnosis.diagnose_stage(ctx, state)
    assert done.skipped and done.summary.startswith("no time for experiments")
