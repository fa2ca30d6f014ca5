"""Generated reproduction tests: ids, devices, markers, and how they behave in the sandbox."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from app.engine.sandbox.runner import Sandbox, SandboxSpec
from app.engine.testgen.repro_test import (
    device_of,
    node_repro_test,
    prepare_repro_body,
    sibling_node,
    slug,
    source_repro_test,
    to_node_id,
    without_expected_failure,
)
from app.engine.sandbox.treerun import TreeRunner, pytest_argv
from app.pipelines.kit.xfail import pytest_counts

NO_PLUGINS = "[pytest]\naddopts = -p no:cacheprovider -p no:hypothesispytest -p no:benchmark -p no:anyio\n"


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ("tests/test_a.py::TestA::test_b", "tests/test_a.py::TestA::test_b"),
        ("test_nn.TestNN.test_conv", "test/test_nn.py::TestNN::test_conv"),  # found under test/
        ("pkg.test_mod.test_fn", "pkg/test_mod.py::test_fn"),
    ],
)
def test_to_node_id(tmp_path, test, expected):
    (tmp_path / "test").mkdir()
    (tmp_path / "test/test_nn.py").write_text("")
    assert to_node_id(test, root=tmp_path) == expected


@pytest.mark.parametrize(
    ("node", "device", "cpu_sibling"),
    [
        ("t.py::TestOps::test_add_cuda", "cuda", "t.py::TestOps::test_add_cpu"),
        ("t.py::test_add[cuda:0]", "cuda", "t.py::test_add[cpu]"),
        ("t.py::test_add[cpu-float32]", "cpu", "t.py::test_add[cpu-float32]"),
        ("t.py::test_cudagraphs", None, "t.py::test_cudagraphs"),
    ],
)
def test_devices_in_test_ids(node, device, cpu_sibling):
    assert device_of(node) == device
    assert sibling_node(node, "cpu") == cpu_sibling


def test_slug_drops_the_test_prefix_and_punctuation():
    assert slug("tests/x.py::TestNN::test_conv[cuda]") == "conv_cuda"
    assert slug("test_") == "failure"


def _cases(source: str) -> dict[str, tuple[str, list[str]]]:
    """`pytest.param(value, marks=[...], id=...)` entries: {id: (value, [mark source])}."""
    cases = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "pytest.param":
            keywords = {k.arg: k.value for k in node.keywords}
            marks = [ast.unparse(m) for m in getattr(keywords.get("marks"), "elts", [])]
            cases[ast.literal_eval(keywords["id"])] = (ast.literal_eval(node.args[0]), marks)
    return cases


def test_node_repro_is_deterministic_and_marks_only_the_failing_device():
    args = dict(reason="RuntimeError: bad", other_devices=("cpu",))
    first = node_repro_test("tests/t.py::test_add_cuda", **args)
    assert first == node_repro_test("tests/t.py::test_add_cuda", **args)
    assert first.path == "tests/scrub/test_add_repro.py" and first.failing_devices == ("cuda",)
    assert _cases(first.source) == {
        "cuda": ("tests/t.py::test_add_cuda", [
            "pytest.mark.xfail(strict=True, reason=REASON)",
            "pytest.mark.skipif(not _device_available('cuda'), reason='needs cuda')",
        ]),
        "cpu": ("tests/t.py::test_add_cpu", []),
    }


def test_node_repro_in_unittest_style_uses_expected_failure_on_the_failing_device_only():
    source = node_repro_test("tests/t.py::test_add_cuda", reason="x", other_devices=("cpu",), style="unittest").source
    tree = ast.parse(source)
    methods = {f.name: [ast.unparse(d) for d in f.decorator_list]
               for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)}
    assert methods["test_cuda"] == [
        "unittest.skipUnless(_device_available('cuda'), 'needs cuda')",
        "unittest.expectedFailure",
    ]
    assert methods["test_cpu"] == []


def test_prepare_repro_body_unwraps_main_and_lets_the_parameter_choose_the_device():
    body = prepare_repro_body('device = "cuda"\nx = [device]\nif __name__ == "__main__":\n    assert x == ["cpu"]\n')
    assert body == "x = [device]\nassert x == ['cpu']"


def test_source_repro_runs_the_minimized_repro_and_records_it():
    seen = []
    generated = source_repro_test("import math\nx = 1\nassert x == 2\n", "x is wrong", reason="AssertionError",
                                  minimize=lambda s: seen.append(s) or "assert 1 == 2\n")
    assert seen and "assert 1 == 2" in generated.source and "import math" not in generated.source
    assert generated.notes == ["minimized 3 -> 1 lines"]


def test_without_expected_failure_strips_every_marker():
    for style in ("pytest", "unittest"):
        generated = node_repro_test("t.py::test_add_cuda", reason="r", other_devices=("cpu",), style=style)
        stripped = without_expected_failure(generated.source)
        assert "xfail" not in stripped and "expectedFailure" not in stripped
        ast.parse(stripped)
    single = without_expected_failure(node_repro_test("t.py::test_add", reason="r").source)
    assert "xfail" not in single and "def test_add_repro():" in single


def _run_in_sandbox(root: Path, path: str) -> dict[str, int]:
    (root / "pytest.ini").write_text(NO_PLUGINS)
    result = TreeRunner(Sandbox(SandboxSpec()), root).run(pytest_argv(path), timeout_s=120)
    return pytest_counts(result.output.text())


def test_device_aware_source_repro_xfails_where_it_fails_and_passes_elsewhere(tmp_path):
    repro = 'device = "cpu"\nif device == "cpu":\n    raise ValueError("wrong on cpu")\n'
    cpu_bug = source_repro_test(repro, "wrong", reason="ValueError", devices=("cpu", "cuda"), failing_devices=("cpu",))
    (tmp_path / cpu_bug.path).parent.mkdir(parents=True)
    (tmp_path / cpu_bug.path).write_text(cpu_bug.source)
    assert _run_in_sandbox(tmp_path, cpu_bug.path) == {"skipped": 1, "xfailed": 1}

    # The same repro, reported for CUDA only: the CPU case must pass, not be an expected failure.
    cuda_bug = source_repro_test(repro.replace('"cpu":', '"cuda":'), "wrong", reason="ValueError",
                                 devices=("cpu", "cuda"), failing_devices=("cuda",))
    (tmp_path / cuda_bug.path).write_text(cuda_bug.source)
    assert _run_in_sandbox(tmp_path, cuda_bug.path) == {"passed": 1, "skipped": 1}
