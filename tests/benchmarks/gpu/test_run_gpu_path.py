"""The GPU path benchmark's logic, checked without a GPU: how each stage is judged, the
`CUDA_LAUNCH_BLOCKING=1` variant, and a clear exit on a host without the NVIDIA driver."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "benchmarks" / "gpu" / "run_gpu_path.py"
_spec = importlib.util.spec_from_file_location("run_gpu_path", SCRIPT)
gpu_path = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_path)

GPU = {"models": ["NVIDIA H200"], "driver": "570.124.06", "cuda_driver": "12.8", "count": 1}


def _trace(line: int, error: str) -> str:
    return f'Traceback (most recent call last):\n  File "/tmp/repro.py", line {line}, in <module>\n    x\n{error}\n'


def test_a_repro_counts_only_when_it_fails_with_its_own_error_and_states_the_gpu():
    oom = {"outcome": "error", "exception": "torch.OutOfMemoryError", "message": "CUDA out of memory. Tried to "
           "allocate 1024.00 GiB", "signature": "OutOfMemoryError: CUDA out of memory", "output_tail": "", "gpu": GPU}
    assert gpu_path.judge_repro("oom", oom)[0]
    assert not gpu_path.judge_repro("oom", {**oom, "gpu": None})[0]  # the report must state the GPU
    other = {**oom, "exception": "RuntimeError", "message": "CUDA error: no kernel image is available"}
    ok, why = gpu_path.judge_repro("oom", other)
    assert not ok and "not OutOfMemoryError" in why
    assert not gpu_path.judge_repro("device_side_assert", {"outcome": "passed", "gpu": GPU})[0]
    assert not gpu_path.judge_repro("oom", {"error": "Traceback ... no such file"})[0]


def test_the_blocking_rerun_must_move_the_error_to_the_launching_line():
    source = gpu_path.REPROS["device_side_assert"]
    assert source.splitlines()[gpu_path.LAUNCH_LINE - 1] == "y = x[idx]"
    assert source.splitlines()[gpu_path.SYNC_LINE - 1] == "print(z.sum().item())"
    variant = gpu_path.blocking_variant(source)
    assert variant.splitlines()[:2] == ["import os", 'os.environ["CUDA_LAUNCH_BLOCKING"] = "1"']
    error = "RuntimeError: CUDA error: device-side assert triggered"
    plain = {"outcome": "error", "output_tail": _trace(gpu_path.SYNC_LINE, error), "gpu": GPU}
    launched = {"outcome": "error", "output_tail": _trace(gpu_path.LAUNCH_LINE + 2, error), "gpu": GPU}
    ok, why = gpu_path.judge_blocking(plain, launched)
    assert ok and "line 6 without, line 4 with" in why
    still_late = {"outcome": "error", "output_tail": _trace(gpu_path.SYNC_LINE + 2, error), "gpu": GPU}
    assert not gpu_path.judge_blocking(plain, still_late)[0]


def test_the_device_aware_test_fails_on_cuda_only_then_passes_everywhere_with_the_marker():
    unmarked = ("FAILED test/test_gpu_path.py::TestFuzzSeed1CUDA::test_fuzz_seed_1_cuda - AssertionError: wrong on cuda\n"
                "PASSED test/test_gpu_path.py::TestFuzzSeed1CPU::test_fuzz_seed_1_cpu\n")
    marked = ("PASSED test/test_gpu_path.py::TestFuzzSeed1CUDA::test_fuzz_seed_1_cuda\n"
              "PASSED test/test_gpu_path.py::TestFuzzSeed1CPU::test_fuzz_seed_1_cpu\n")
    assert gpu_path.judge_device_test(unmarked, marked)[0]
    assert not gpu_path.judge_device_test(marked, marked)[0]  # it never failed: proves nothing
    cpu_too = unmarked.replace("PASSED test/test_gpu_path.py::TestFuzzSeed1CPU", "FAILED test/test_gpu_path.py::"
                                                                                 "TestFuzzSeed1CPU")
    assert not gpu_path.judge_device_test(cpu_too, marked)[0]


@pytest.mark.skipif(Path("/proc/driver/nvidia/version").exists(), reason="this host has an NVIDIA driver")
def test_without_an_nvidia_driver_it_says_so_and_exits_2():
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert "no NVIDIA driver on this host" in done.stderr and "nothing was run" in done.stderr
