"""The kit's stress core on a script (an issue's repro), in the real sandbox."""

from __future__ import annotations

from app.pipelines.kit.stress import StressFinding, Stressed, Unmeasured, stress_script
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings
from tests.pipelines.envs import make_envs, remove

# Fails on every other run in one process: state that leaks between runs (what in-process
# repetition amplifies); each fresh interpreter's first run fails.
LEAKY = """import builtins
runs = getattr(builtins, "_scrub_runs", 0) + 1
builtins._scrub_runs = runs
if runs % 2 == 1:
    raise RuntimeError(f"stale cache entry on run {runs}")
"""


def _ctx(tmp_path) -> MemoryRunContext:
    return MemoryRunContext(run_id=3, settings=Settings(data_dir=tmp_path, sandbox="bwrap"), params={})


def test_a_script_is_stressed_for_its_rate_and_the_time_to_its_first_failure(tmp_path):
    found = stress_script(_ctx(tmp_path), LEAKY, "o/r#1: RuntimeError: stale cache entry", window_s=5,
                          per_iteration_s=60, verify_s=lambda: 120)
    assert isinstance(found, Stressed), found
    m = found.measurement
    assert m.errors == 0 and m.failures >= 1 and m.iterations >= m.failures
    assert m.first_failure.startswith("RuntimeError: stale cache entry")
    assert m.first_failure_s is not None and 0 < m.first_failure_s <= m.elapsed_s
    assert found.verification.xfailed, found.verification  # the tuned file fails as written
    finding = found.finding()
    assert StressFinding.from_dict(finding.to_dict()) == finding
    assert f"the first failure came after {m.first_failure_s:.1f} s" in finding.sentence()
    assert f"{m.failures} of {m.iterations} runs failed" in finding.sentence()
    assert not list((tmp_path / "stress").iterdir())  # the scratch tree is gone


def test_a_stress_run_that_cannot_run_says_why(tmp_path):
    found = stress_script(_ctx(tmp_path), "print('ok')\n", "never", window_s=2, per_iteration_s=30,
                          verify_s=lambda: 30, python="/nonexistent/python3")
    assert isinstance(found, Unmeasured) and "cannot run its interpreter" in found.reason
    finding = found.finding()
    assert not finding.measured and finding.sentence().startswith("The stress test (seed 004) measured nothing")


def test_an_environment_without_pytest_gets_the_fix_named(tmp_path):
    envs, root = make_envs(["bare"])  # a venv with no packages: no pytest to run the stress test on
    try:
        found = stress_script(_ctx(tmp_path), "print('ok')\n", "never", window_s=2, per_iteration_s=30,
                              verify_s=lambda: 30, python=envs["bare"])
    finally:
        remove(root)
    assert isinstance(found, Unmeasured), found
    assert "has no pytest" in found.reason and "install pytest" in found.reason
