"""The job parser on real-shaped logs: a crash or a timeout is one failure, named by its node id."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from app.engine.cilogs import job
from app.engine.cilogs.archive import read_text_log

REAL_LOGS = Path(__file__).parent / "real_logs"

# file: (test, kind, exception, message)
EXPECTED = {
    "segfault_device_type_test.txt": (
        "test/test_nn.py::TestNNDeviceTypeCUDA::test_affine_2d_rotateRandom_cuda",
        "signal", "SIGSEGV", "Fatal Python error: Segmentation fault"),
    "segfault_parametrized_helper_frames.txt": (
        "test/test_models.py::test_classification_model[cuda-squeezenet1_0]",
        "signal", "SIGSEGV", "Fatal Python error: Segmentation fault"),
    "timeout_run_test_faulthandler.txt": (
        "test_ops.py::TestCommonCPU::test_out_baddbmm_cpu_float32", "timeout", "Timeout", "Timeout >1800s"),
    "timeout_job_limit_running_test.txt": (
        "test/distributed/test_c10d_gloo.py::ProcessGroupGlooTest::test_allreduce_stress[world_size=4]",
        "timeout", "Timeout", "Timeout >14400s"),
    "timeout_thread_dump_node_id_line_before.txt": (
        "test_threads.py::test_hangs_with_a_thread", "timeout", "Timeout", "Timeout"),
    "timeout_thread_dump_then_terminated.txt": (
        "tests/test_dataloader.py::TestWorkers::test_worker_hang[fork]", "timeout", "Timeout", "Timeout"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_log_yields_one_failure_named_by_its_node_id(name):
    report = read_text_log(REAL_LOGS / name, job="test")
    assert [(f.test, f.kind, f.exception, f.message) for f in report.failures] == [EXPECTED[name]]


def test_the_crash_excerpt_keeps_the_faulthandler_stack():
    [failure] = read_text_log(REAL_LOGS / "segfault_device_type_test.txt").failures
    assert "line 8470 in test_affine_2d_rotateRandom" in failure.excerpt
    assert "instantiated_test" in failure.excerpt


def _log(lines: list[str]) -> io.BytesIO:
    return io.BytesIO("".join(f"{line}\n" for line in lines).encode())


def test_a_crash_after_the_test_finished_still_names_the_frame_not_the_last_test():
    lines = [
        "test/test_a.py::test_first PASSED [ 50%]",
        "Fatal Python error: Segmentation fault",
        "",
        "Current thread 0x00007f (most recent call first):",
        '  File "/src/test/test_b.py", line 3 in test_second',
        "##[error]Process completed with exit code 139.",
    ]
    [failure] = read_text_log(_log(lines)).failures
    assert (failure.test, failure.exception) == ("test_b.py::test_second", "SIGSEGV")


def test_a_crash_in_another_file_than_the_running_test_is_not_blamed_on_it():
    lines = [
        "test/test_a.py::test_first Fatal Python error: Segmentation fault",
        "Current thread 0x00007f (most recent call first):",
        '  File "/src/other/test_plugin.py", line 3 in test_hook',
    ]
    [failure] = read_text_log(_log(lines)).failures
    assert failure.test == "test_plugin.py::test_hook"


def test_a_job_timeout_with_no_running_test_after_a_timeout_adds_nothing():
    lines = [
        "test/test_io.py::test_read ",
        "Timeout (0:05:00)!",
        "Current thread 0x00007f (most recent call first):",
        '  File "/src/test/test_io.py", line 9 in test_read',
        "test/test_io.py::test_read FAILED [100%]",
        "##[error]The job running on runner R has exceeded the maximum execution time of 10 minutes.",
    ]
    failures = read_text_log(_log(lines)).failures
    assert [(f.test, f.kind, f.message) for f in failures] == [("test/test_io.py::test_read", "timeout", "Timeout >300s")]


def test_a_job_timeout_alone_is_one_timeout_without_a_test():
    lines = ["step output", "Command took >30min, returning 124", "##[error]Process completed with exit code 1."]
    [failure] = read_text_log(_log(lines)).failures
    assert (failure.test, failure.kind, failure.exception, failure.message) == ("", "timeout", "Timeout", "Timeout >1800s")


def test_a_kill_signal_with_no_timeout_is_still_its_own_failure():
    lines = ["tests/test_x.py::test_y ", "/tmp/s.sh: line 1:  9 Terminated   pytest", "##[error]Process completed with exit code 143."]
    [failure] = read_text_log(_log(lines)).failures
    assert (failure.test, failure.kind, failure.exception) == ("tests/test_x.py::test_y", "signal", "SIGTERM")


@pytest.mark.parametrize(
    ("test_id", "frame", "expected"),
    [
        ("test_ops.py::TestCommonCPU::test_out_addmm_cpu_float32", ("/w/test/test_ops.py", "test_out"), True),
        ("test/test_nn.py::TestNN::test_conv[1]", ("/w/x/test_nn.py", "helper"), True),
        ("test/test_nn.py::TestNN::test_conv", ("/w/x/test_other.py", "test_convert"), False),
        ("test/test_nn.py::TestNN::test_conv", ("/w/x/test_other.py", "test_co"), False),
        ("Conv.Backward", ("/w/conv.py", "Backward"), True),
    ],
)
def test_frame_is_in_test(test_id, frame, expected):
    assert job.frame_is_in_test(test_id, frame) is expected


def test_parametrization_with_brackets_is_kept_whole():
    lines = ["test/t.py::test_cat[[1, 2]-float32] Fatal Python error: Aborted"]
    [failure] = read_text_log(_log(lines)).failures
    assert failure.test == "test/t.py::test_cat[[1, 2]-float32]"
    assert job.test_function_name(failure.test) == "test_cat"
