"""The error-pattern catalog: each pattern recognises its error, the most specific wins."""

from __future__ import annotations

import pytest

from app.engine.cilogs.diagnose import CATALOG, diagnose

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
}


def test_every_catalog_entry_has_an_example():
    assert {pattern.name for pattern in CATALOG} == set(EXAMPLES)


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
