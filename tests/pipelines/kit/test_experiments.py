"""The sandbox side of the experiments: variants of a script (warm, or cold when they set the
environment or measure a rate) and variants of one file of a checkout, each run judged."""

from __future__ import annotations

import sys

from app.engine.diagnosis.model import Variant
from app.engine.sandbox.runner import Sandbox, SandboxSpec
from app.engine.sandbox.treerun import TreeRunner, pytest_argv
from app.pipelines.kit.experiments import ScriptRunner, TreeVariantRunner

SCRIPT = "import os\nprint('seed', os.environ.get('PYTHONHASHSEED'))\nraise ValueError('bad size 3')\n"


def judge(process, variant) -> bool:
    return "ValueError: bad size" in process.output.text()


def test_a_script_variant_runs_warm_unless_it_sets_the_environment_or_measures_a_rate():
    spec = SandboxSpec(kind="bwrap", python=sys.executable, env={"PYTHONHASHSEED": "0"})
    with ScriptRunner(spec, judge, jobs=2, source=SCRIPT) as run:
        (warm,) = run(Variant("as is", SCRIPT), 60)
        (cold,) = run(Variant("hash seed 7", SCRIPT, env={"PYTHONHASHSEED": "7"}), 60)
        rate = run(Variant("rate", SCRIPT.replace("bad size", "other"), runs=2), 60)
        seen = run.server.ready_info  # the zygote started for the warm variant
    assert (warm.outcome, warm.same, warm.description) == ("error", True, "ValueError: bad size 3")
    assert "seed 0" in warm.output and "seed 7" in cold.output and cold.same
    assert [(o.same, o.description) for o in rate] == [(False, "ValueError: other 3")] * 2
    assert seen.get("ready")


TEST_FILE = "def test_size():\n    assert [1, 2, 3][-1] == 3\n"


def test_a_tree_variant_replaces_one_file_for_its_run_only(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_sizes.py").write_text(TEST_FILE)
    sandbox = Sandbox(SandboxSpec(kind="bwrap", python=sys.executable, env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}))
    run = TreeVariantRunner(TreeRunner(sandbox, tmp_path), "tests/test_sizes.py",
                            pytest_argv("tests/test_sizes.py::test_size"), judge)
    (failed,) = run(Variant("broken", TEST_FILE.replace("== 3", "== 4").replace(
        "assert", "raise ValueError('bad size 3')\n    assert")), 120)
    (passed,) = run(Variant("as is", TEST_FILE), 120)
    assert (failed.outcome, failed.same, failed.description) == ("error", True, "ValueError: bad size 3")
    assert (passed.outcome, passed.same) == ("passed", False)
    assert (tmp_path / "tests/test_sizes.py").read_text() == TEST_FILE  # the checkout is untouched
