"""Per-device statuses from pytest output."""

from app.engine.fuzz.results import device_results, expected

OUTPUT = """PASSED tests/test_x.py::test_fuzz_seed_2[cpu]
XFAIL tests/test_x.py::test_fuzz_seed_2[accel] - fuzz seed 2
test/test_ops.py::TestFuzzSeed2CPU::test_fuzz_seed_2_cpu PASSED [ 50%]
test/test_ops.py::TestFuzzSeed2CUDA::test_fuzz_seed_2_cuda FAILED [100%]
PASSED tests/test_x.py::test_other[cpu]
"""


def test_device_results_from_summary_and_verbose_lines():
    assert device_results(OUTPUT, ["cpu", "accel"], "test_fuzz_seed_2") == {"cpu": "PASSED", "accel": "XFAIL"}
    assert device_results(OUTPUT, ["cpu", "cuda"], "test_fuzz_seed_2") == {"cpu": "PASSED", "cuda": "FAILED"}
    assert device_results("FAILED t.py::test_fuzz_seed_1 - E\n", [], "test_fuzz_seed_1") == {"": "FAILED"}


def test_expected_statuses():
    assert expected(["cpu", "accel"], ["accel"], marked=True) == {"cpu": "PASSED", "accel": "XFAIL"}
    assert expected(["cpu", "accel"], ["accel"], marked=False) == {"cpu": "PASSED", "accel": "FAILED"}
    assert expected([], [""], marked=True) == {"": "XFAIL"}
    assert expected([], [], marked=False) == {"": "PASSED"}  # device-independent, with the fix


def test_pytorch_device_expected_failures_report_a_pass():
    assert expected(["cpu", "cuda"], ["cpu"], marked=True, style="pytorch") == {"cpu": "PASSED", "cuda": "PASSED"}
    assert expected([], [""], marked=True, style="pytorch") == {"": "XFAIL"}
