"""CI log archives -> failing tests: each failure found once, with the right kind and test."""

from __future__ import annotations

import io
import tracemalloc
import zipfile

import pytest

from app.engine.cilogs.archive import (
    archive_jobs,
    parse_stream,
    read_archive,
    read_log,
    read_text_log,
)
from tests.engine.cilogs.samples import (
    PYTEST_FAILURES,
    Job,
    build_archive,
    passing_lines,
    sample_jobs,
    setup_step,
    stamp,
)

EXPECTED = {
    # (job, test): (kind, exception, source)
    ("linux-py3.11 / test (default, 1, 3, linux.2xlarge)", "test/test_nn.py::TestNN::test_embedding"): (
        "exception", "RuntimeError", "pytest"),
    ("linux-py3.11 / test (default, 1, 3, linux.2xlarge)", "test/test_nn.py::test_add"): (
        "assertion", "AssertionError", "pytest"),
    ("unittest", "test_math.TestMath.test_div"): ("exception", "ZeroDivisionError", "unittest"),
    ("unittest", "test_math.TestMath.test_add"): ("assertion", "AssertionError", "unittest"),
    ("cpp / gtest", "MathTest.Sub"): ("assertion", "gtest.Failure", "gtest"),
    ("distributed", "test/test_dist.py::test_allreduce"): ("timeout", "Timeout", "timeout"),
    ("crash", "test/test_ops.py::test_crash"): ("signal", "SIGSEGV", "crash"),
    ("build", ""): ("exit", "ExitCode", "exit"),
}


@pytest.fixture
def sample_archive(tmp_path):
    path = tmp_path / "logs.zip"
    path.write_bytes(build_archive(sample_jobs()))
    return path


def _job_names():
    return [job.name for job in sample_jobs()]


def test_every_failure_of_every_job_is_found_once_with_its_kind(sample_archive):
    report = read_archive(sample_archive, repo="o/r", job_names=_job_names())

    found = {(f.job, f.test): (f.kind, f.exception, f.source) for f in report.failures}
    assert found == EXPECTED
    assert len(report.failures) == len(EXPECTED)  # nothing twice (job file + step files)
    assert [j.name for j in report.jobs] == _job_names()
    assert {j.name: j.exit_code for j in report.jobs}["crash"] == 139


def test_messages_and_excerpts_are_clean_and_specific(sample_archive):
    by_test = {f.test: f for f in read_archive(sample_archive, job_names=_job_names()).failures}

    embedding = by_test["test/test_nn.py::TestNN::test_embedding"]
    assert embedding.message.startswith("CUDA error: device-side assert triggered")
    assert embedding.diagnosis == "device_side_assert" and "CPU" in embedding.hint
    assert "E       RuntimeError" in embedding.excerpt and "test/test_nn.py:41: RuntimeError" in embedding.excerpt
    assert by_test["test/test_nn.py::test_add"].message.splitlines()[0] == "assert 2 == 3"
    assert by_test["test_math.TestMath.test_add"].message == "2 != 3"
    assert "sub(3, 1)" in by_test["MathTest.Sub"].message
    assert "in test_allreduce" in by_test["test/test_dist.py::test_allreduce"].excerpt  # the hung stack
    assert "line 88 in test_crash" in by_test["test/test_ops.py::test_crash"].excerpt
    for failure in by_test.values():
        for text in (failure.message, failure.excerpt, failure.test, failure.job):
            assert "\x1b" not in text and "2024-05-01T" not in text and "##[" not in text
        assert len(failure.signature) == 64


def test_archive_members_prefer_job_files_and_order_steps():
    names = ["1_b.txt", "b/1_Set up.txt", "b/2_Test.txt", "b/system.txt", "a/10_z.txt", "a/2_y.txt", "0_c.txt"]
    assert archive_jobs(names) == [("c", ["0_c.txt"]), ("b", ["1_b.txt"]), ("a", ["a/2_y.txt", "a/10_z.txt"])]


@pytest.mark.parametrize("chunk_size", [1, 7, 64, 4096])
def test_chunk_boundaries_do_not_change_the_result(chunk_size):
    text = "".join(f"{stamp(i)}{line}\n" for i, line in enumerate(passing_lines(30) + PYTEST_FAILURES)).encode()
    whole = parse_stream([text], "job")[1]
    pieces = parse_stream((text[i : i + chunk_size] for i in range(0, len(text), chunk_size)), "job")[1]
    assert [(f.test, f.kind, f.message, f.excerpt) for f in pieces] == [
        (f.test, f.kind, f.message, f.excerpt) for f in whole
    ]
    assert len(whole) == 2


def _text(lines: list[str]) -> io.BytesIO:
    return io.BytesIO("".join(f"{stamp(i)}{line}\n" for i, line in enumerate(lines)).encode())


def test_pytest_timeout_signal_method_merges_stack_and_report():
    lines = [
        "test/test_io.py::test_read ",
        "+++++++++++++++++++++++++++++++++++ Timeout ++++++++++++++++++++++++++++++++++++",
        "~~~~~~~~~~~~~~~~~~~~~~~~ Stack of MainThread (140512) ~~~~~~~~~~~~~~~~~~~~~~~~~",
        '  File "/src/test/test_io.py", line 9, in test_read',
        "    queue.get()",
        "+++++++++++++++++++++++++++++++++++ Timeout ++++++++++++++++++++++++++++++++++++",
        "FAILED [100%]",
        "=================================== FAILURES ===================================",
        "__________________________________ test_read ___________________________________",
        ">       queue.get()",
        "E       Failed: Timeout >300.0s",
        "",
        "test/test_io.py:9: Failed",
        "=========================== short test summary info ============================",
        "FAILED test/test_io.py::test_read - Failed: Timeout >300.0s",
    ]
    [failure] = read_text_log(_text(lines)).failures
    assert (failure.test, failure.kind, failure.exception) == ("test/test_io.py::test_read", "timeout", "Timeout")
    assert failure.message == "Timeout >300.0s"
    assert "queue.get()" in failure.excerpt and "Stack of MainThread" in failure.excerpt


def test_native_crash_is_attributed_to_the_running_googletest_and_counted_beside_failures():
    lines = [
        "[ RUN      ] Conv.Forward",
        "/src/conv_test.cpp:10: Failure",
        "Value of: ok",
        "[  FAILED  ] Conv.Forward (1 ms)",
        "[ RUN      ] Conv.Backward",
        "/home/runner/work/_temp/x.sh: line 2:  812 Segmentation fault      (core dumped) ./conv_test",
        "##[error]Process completed with exit code 139.",
    ]
    failures = {f.test: f for f in read_text_log(_text(lines)).failures}
    assert set(failures) == {"Conv.Forward", "Conv.Backward"}
    assert (failures["Conv.Backward"].kind, failures["Conv.Backward"].exception) == ("signal", "SIGSEGV")
    assert failures["Conv.Forward"].kind == "assertion"


def test_exit_code_alone_is_reported_only_when_nothing_explains_it():
    explained = read_text_log(_text(["FAILED test/a.py::test_x - ValueError: bad", "##[error]Process completed with exit code 1."]))
    assert [(f.test, f.kind) for f in explained.failures] == [("test/a.py::test_x", "exception")]
    script = read_text_log(_text([
        "Traceback (most recent call last):",
        '  File "/src/train.py", line 3, in <module>',
        "    main()",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "##[error]Process completed with exit code 1.",
    ]))
    [oom] = script.failures
    assert (oom.test, oom.kind, oom.exception, oom.diagnosis) == ("", "exception", "torch.OutOfMemoryError", "cuda_oom")


def test_unittest_pre_311_header_and_pytest_summary_without_sections():
    lines = [
        "======================================================================",
        "FAIL: test_add (test_math.TestMath)",
        "----------------------------------------------------------------------",
        "Traceback (most recent call last):",
        '  File "/src/test_math.py", line 8, in test_add',
        "AssertionError: 2 != 3",
        "",
        "----------------------------------------------------------------------",
        "FAILED (failures=1)",
        "[gw1] [ 50%] FAILED test/test_b.py::test_p[cuda-float32]",
        "FAILED test/test_b.py::test_p[cuda-float32] - RuntimeError: shape '[2, 3]' is invalid for input of size 7",
    ]
    failures = {f.test: f for f in read_text_log(_text(lines)).failures}
    assert set(failures) == {"test_math.TestMath.test_add", "test/test_b.py::test_p[cuda-float32]"}
    assert failures["test/test_b.py::test_p[cuda-float32]"].diagnosis == "shape_mismatch"


def test_plain_text_without_timestamps_and_a_bare_traceback(tmp_path):
    log = tmp_path / "raw.txt"
    log.write_text(
        "Traceback (most recent call last):\n"
        '  File "repro.py", line 4, in <module>\n'
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    )
    [failure] = read_log(log).failures
    assert (failure.kind, failure.exception, failure.diagnosis) == ("exception", "RuntimeError", "illegal_memory_access")


def _big_job_chunks(megabytes: int):
    """A job log of `megabytes` of passing tests with one failure at the end, made on the fly."""
    block = "".join(f"{stamp(i)}{line}\n" for i, line in enumerate(passing_lines(2000))).encode()
    for _ in range(megabytes * (1 << 20) // len(block)):
        yield block
    yield "".join(f"{stamp(0)}{line}\n" for line in PYTEST_FAILURES).encode()


def _peak_bytes(megabytes: int) -> int:
    tracemalloc.start()
    try:
        _, failures = parse_stream(_big_job_chunks(megabytes), "big")
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        assert len(failures) == 2


def test_memory_is_flat_whatever_the_log_size():
    small, large = _peak_bytes(4), _peak_bytes(32)
    assert large < 4 * (1 << 20)  # a few chunks, never the log
    assert large < small * 1.5 + 256 * 1024  # 8x the input, about the same memory


def _archive_peak_bytes(path, megabytes: int) -> int:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive, archive.open("0_big.txt", "w") as member:
        for chunk in _big_job_chunks(megabytes):
            member.write(chunk)
    tracemalloc.start()
    try:
        report = read_archive(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(report.failures) == 2 and report.jobs[0].lines > megabytes * 10_000
    return peak


def test_zip_members_are_streamed_not_loaded(tmp_path):
    small, large = _archive_peak_bytes(tmp_path / "small.zip", 4), _archive_peak_bytes(tmp_path / "large.zip", 32)
    assert large < 10 * (1 << 20)  # the decompressor's buffers and a chunk, not the 32 MB member
    assert large < small * 1.5 + 256 * 1024


def test_job_with_steps_only_and_unterminated_step_files(tmp_path):
    job = setup_step(Job("build", with_job_file=False)).step("Compile", ["make: *** [all] Error 2"], exit_code=2)
    data = build_archive([job])
    path = tmp_path / "a.zip"
    path.write_bytes(data)
    [failure] = read_log(path).failures
    assert failure.kind == "exit" and failure.message == "Process completed with exit code 2"
    assert "make: *** [all] Error 2" in failure.excerpt


def test_collection_error_block_and_summary_are_one_failure():
    lines = [
        "==================================== ERRORS ====================================",
        "____________________ ERROR collecting test/test_import.py _____________________",
        "ImportError while importing test module '/src/test/test_import.py'.",
        "E   ModuleNotFoundError: No module named 'torchvision'",
        "=========================== short test summary info ============================",
        "ERROR test/test_import.py - ModuleNotFoundError: No module named 'torchvision'",
        "##[error]Process completed with exit code 2.",
    ]
    [failure] = read_text_log(_text(lines)).failures
    assert (failure.test, failure.kind, failure.exception) == ("test/test_import.py", "exception", "ModuleNotFoundError")
    assert "ERROR collecting" in failure.excerpt


def test_signal_words_outside_a_shell_report_are_not_a_crash():
    lines = ["ERROR: upload Aborted by the user, retrying", "##[error]Process completed with exit code 1."]
    [failure] = read_text_log(_text(lines)).failures
    assert (failure.kind, failure.exception) == ("exit", "ExitCode")
    assert "upload Aborted" in failure.excerpt
