"""The error-pattern catalog: each pattern recognises its error, the most specific wins, and
carries the experiments that test it."""

from __future__ import annotations

import pytest

from app.engine.diagnosis.catalog import CATALOG, diagnose

EXAMPLES = {
    "device_side_assert": "RuntimeError: CUDA error: device-side assert triggered",
    "illegal_memory_access": "RuntimeError: CUDA error: an illegal memory access was encountered",
    "cuda_oom": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "dataloader_worker_died": "RuntimeError: DataLoader worker (pid 12345) exited unexpectedly",
    "nan_inf": "RuntimeError: Function 'LogSoftmaxBackward0' returned nan values in its 0th output.",
    "shape_mismatch": "RuntimeError: The size of tensor a (64) must match the size of tensor b (128) at non-singleton dimension 1",
    "device_mismatch": "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
    "dtype_mismatch": "RuntimeError: expected scalar type Float but found Half",
    "inplace_autograd": "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation",
    "nccl_distributed": "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error",
    "cudnn_error": "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED",
    "cuda_error": "RuntimeError: CUDA error: invalid configuration argument",
    "index_error": "IndexError: index 1000 is out of bounds for dimension 0 with size 1000",
    "timeout_hang": "Failed: Timeout >300.0s",
    "segfault": "Fatal Python error: Segmentation fault",
    "tolerance_mismatch": "AssertionError: Tensor-likes are not close!\nMismatched elements: 3 / 100 (3.0%)",
    "cpu_oom": "RuntimeError: [enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: can't allocate memory: "
               "you tried to allocate 40000000000 bytes. Error code 12 (Cannot allocate memory)",
    "compile_failure": "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nLoweringException: x",
}


def test_every_catalog_entry_with_a_regex_has_an_example():
    assert {pattern.name for pattern in CATALOG if pattern.regex is not None} == set(EXAMPLES)


def test_patterns_without_a_regex_apply_by_a_condition_on_the_repro():
    assert all(pattern.when is not None for pattern in CATALOG if pattern.regex is None)


def test_the_rows_that_seed_003_names_experiments_for_carry_them():
    experiments = {pattern.name: {e.name for e in pattern.experiments} for pattern in CATALOG}
    assert {"backends", "dynamic_shapes", "dynamo_reset", "compare_with_eager"} <= experiments["compile_failure"]
    assert {"cuda_launch_blocking", "on_cpu"} <= experiments["device_side_assert"]
    assert {"first_nonfinite", "detect_anomaly", "float64"} <= experiments["nan_inf"]
    assert experiments["dataloader_worker_died"] == {"num_workers_0"}
    assert {"deterministic_algorithms", "one_thread", "fixed_seeds", "hash_seed"} <= experiments["nondeterminism"]
    assert experiments["cpu_oom"] == experiments["cuda_oom"] == {"smaller_sizes"}


@pytest.mark.parametrize(("name", "text"), sorted(EXAMPLES.items()))
def test_each_pattern_recognises_its_error(name, text):
    found = diagnose(text)
    assert found is not None and found.name == name
    assert found.hint and found.matched in text


def test_hints_say_what_to_try():
    assert "CUDA_LAUNCH_BLOCKING=1" in diagnose(EXAMPLES["illegal_memory_access"]).hint
    assert "CPU" in diagnose(EXAMPLES["device_side_assert"]).hint
    assert "num_workers=0" in diagnose(EXAMPLES["dataloader_worker_died"]).hint
    assert "detect_anomaly" in diagnose(EXAMPLES["nan_inf"]).hint
    assert "shape" in diagnose(EXAMPLES["shape_mismatch"]).hint


def test_unknown_errors_get_no_diagnosis():
    assert diagnose("ValueError: the config file has no [tool] section") is None
    assert diagnose("test_nan_handling PASSED") is None
