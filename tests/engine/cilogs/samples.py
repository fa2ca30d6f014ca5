"""Build GitHub Actions log archives the way GitHub serves them, for the CI-ingest tests.

The zip holds `<i>_<job>.txt` (the whole job) and `<job>/<n>_<step>.txt` (one per step); every
line starts with `2024-05-01T12:34:56.1234567Z `; steps open with `##[group]`/`##[endgroup]`;
test runners colour their output with ANSI codes; a failed step ends with
`##[error]Process completed with exit code N.`
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, field

from app.engine.cilogs.archive import archive_job_name

RED, GREEN, BOLD, RESET = "\x1b[31m", "\x1b[32m", "\x1b[1m", "\x1b[0m"


def stamp(index: int) -> str:
    return f"2024-05-01T12:{index // 60 % 60:02d}:{index % 60:02d}.{index % 10_000_000:07d}Z "


@dataclass
class Job:
    name: str
    steps: list[tuple[str, list[str]]] = field(default_factory=list)
    with_job_file: bool = True  # GitHub omits it for some jobs (e.g. cancelled): steps only

    def step(self, name: str, lines: list[str], exit_code: int = 0) -> Job:
        body = [f"##[group]Run {name}", f"{name} --with-args", "##[endgroup]", *lines]
        if exit_code:
            body.append(f"##[error]Process completed with exit code {exit_code}.")
        self.steps.append((name, body))
        return self


def _stamped(lines: list[str], start: int) -> str:
    return "".join(f"{stamp(start + i)}{line}\n" for i, line in enumerate(lines))


def build_archive(jobs: list[Job]) -> bytes:
    """The zip GitHub returns for a run's logs."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for index, job in enumerate(jobs):
            folder = archive_job_name(job.name)  # GitHub drops "/" and friends from paths
            offset, job_text = 0, []
            for number, (step, lines) in enumerate(job.steps, start=1):
                text = _stamped(lines, offset)
                offset += len(lines)
                job_text.append(text)
                archive.writestr(f"{folder}/{number}_{step}.txt", text)
            if job.with_job_file:
                archive.writestr(f"{index}_{folder}.txt", "".join(job_text))
            archive.writestr(f"{folder}/system.txt", "runner system log\n")
    return buffer.getvalue()


def setup_step(job: Job) -> Job:
    return job.step("Set up job", ["Current runner version: '2.317.0'", "Operating System", "  Ubuntu 22.04"])


# --- runner outputs --------------------------------------------------------------------------

PYTEST_FAILURES = [
    f"{BOLD}============================= test session starts =============================={RESET}",
    "collected 5 items",
    "",
    f"test/test_nn.py::TestNN::test_linear {GREEN}PASSED{RESET} [ 20%]",
    f"test/test_nn.py::TestNN::test_embedding {RED}FAILED{RESET} [ 40%]",
    f"test/test_nn.py::test_add {RED}FAILED{RESET} [ 60%]",
    f"test/test_nn.py::test_sub {GREEN}PASSED{RESET} [ 80%]",
    f"test/test_nn.py::test_mul {GREEN}PASSED{RESET} [100%]",
    "",
    "=================================== FAILURES ===================================",
    f"{RED}{BOLD}_____________________________ TestNN.test_embedding _____________________________{RESET}",
    "",
    "self = <test_nn.TestNN testMethod=test_embedding>",
    "",
    "    def test_embedding(self):",
    ">       emb(torch.tensor([1000], device='cuda'))",
    f"{RED}E       RuntimeError: CUDA error: device-side assert triggered{RESET}",
    "E       CUDA kernel errors might be asynchronously reported at some other API call.",
    "",
    "test/test_nn.py:41: RuntimeError",
    "----------------------------- Captured stderr call -----------------------------",
    (
        "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1236: indexSelectLargeIndex: block: [3,0,0] "
        "Assertion `srcIndex < srcSelectDimSize` failed."
    ),
    f"{RED}{BOLD}___________________________________ test_add ___________________________________{RESET}",
    "",
    "    def test_add():",
    ">       assert add(1, 1) == 3",
    "E       assert 2 == 3",
    "E        +  where 2 = add(1, 1)",
    "",
    "test/test_nn.py:12: AssertionError",
    "=========================== short test summary info ============================",
    "FAILED test/test_nn.py::TestNN::test_embedding - RuntimeError: CUDA error: device-side assert triggered",
    "FAILED test/test_nn.py::test_add - assert 2 == 3",
    f"{RED}========================= 2 failed, 3 passed in 4.21s ========================={RESET}",
]

UNITTEST_FAILURES = [
    "test_add (test_math.TestMath.test_add) ... FAIL",
    "test_div (test_math.TestMath.test_div) ... ERROR",
    "test_ok (test_math.TestMath.test_ok) ... ok",
    "",
    "======================================================================",
    "ERROR: test_div (test_math.TestMath.test_div)",
    "----------------------------------------------------------------------",
    "Traceback (most recent call last):",
    '  File "/home/runner/work/proj/proj/test_math.py", line 11, in test_div',
    "    1 / 0",
    "    ~~^~~",
    "ZeroDivisionError: division by zero",
    "",
    "======================================================================",
    "FAIL: test_add (test_math.TestMath.test_add)",
    "----------------------------------------------------------------------",
    "Traceback (most recent call last):",
    '  File "/home/runner/work/proj/proj/test_math.py", line 8, in test_add',
    "    self.assertEqual(1 + 1, 3)",
    "AssertionError: 2 != 3",
    "",
    "----------------------------------------------------------------------",
    "Ran 3 tests in 0.002s",
    "",
    "FAILED (failures=1, errors=1)",
]

GTEST_FAILURES = [
    "[==========] Running 3 tests from 1 test suite.",
    "[----------] 3 tests from MathTest",
    "[ RUN      ] MathTest.Add",
    "[       OK ] MathTest.Add (0 ms)",
    "[ RUN      ] MathTest.Sub",
    "/home/runner/work/proj/proj/test/math_test.cpp:17: Failure",
    "Expected equality of these values:",
    "  sub(3, 1)",
    "    Which is: 1",
    "  2",
    f"{RED}[  FAILED  ]{RESET} MathTest.Sub (0 ms)",
    "[ RUN      ] MathTest.Mul",
    "[       OK ] MathTest.Mul (0 ms)",
    "[----------] 3 tests from MathTest (0 ms total)",
    "[==========] 3 tests from 1 test suite ran. (1 ms total)",
    f"{GREEN}[  PASSED  ]{RESET} 2 tests.",
    f"{RED}[  FAILED  ]{RESET} 1 test, listed below:",
    f"{RED}[  FAILED  ]{RESET} MathTest.Sub",
    "",
    " 1 FAILED TEST",
]

PYTEST_TIMEOUT_THREAD = [
    "test/test_dist.py::test_broadcast PASSED [ 50%]",
    "test/test_dist.py::test_allreduce ",
    "+++++++++++++++++++++++++++++++++++ Timeout ++++++++++++++++++++++++++++++++++++",
    "~~~~~~~~~~~~~~~~~~~~~~~~ Stack of MainThread (140512) ~~~~~~~~~~~~~~~~~~~~~~~~~",
    '  File "/usr/lib/python3.11/site-packages/_pytest/python.py", line 194, in pytest_pyfunc_call',
    "    result = testfunction(**testargs)",
    '  File "/home/runner/work/proj/proj/test/test_dist.py", line 42, in test_allreduce',
    "    dist.all_reduce(t)",
    '  File "/usr/lib/python3.11/site-packages/torch/distributed/c10d.py", line 2050, in all_reduce',
    "    work.wait()",
    "+++++++++++++++++++++++++++++++++++ Timeout ++++++++++++++++++++++++++++++++++++",
]

PYTEST_SEGFAULT = [
    "test/test_ops.py::test_ok PASSED [ 33%]",
    "test/test_ops.py::test_crash Fatal Python error: Segmentation fault",
    "",
    "Current thread 0x00007f3b9c1ff740 (most recent call first):",
    '  File "/home/runner/work/proj/proj/test/test_ops.py", line 88 in test_crash',
    '  File "/usr/lib/python3.11/site-packages/_pytest/python.py", line 194 in pytest_pyfunc_call',
    "",
    "Extension modules: torch._C, numpy.core._multiarray_umath (total: 2)",
    "/home/runner/work/_temp/abc.sh: line 1:  2301 Segmentation fault      (core dumped) pytest -v test/",
]


def passing_lines(count: int, start: int = 0) -> list[str]:
    return [f"test/test_big.py::test_case_{i} {GREEN}PASSED{RESET} [ {i % 100:2d}%]" for i in range(start, start + count)]


def sample_jobs(shard: int = 1) -> list[Job]:
    """Five jobs: pytest, unittest, GoogleTest, a timeout, a segfault, and a steps-only build."""
    return [
        setup_step(Job(f"linux-py3.11 / test (default, {shard}, 3, linux.2xlarge)")).step(
            "Test", passing_lines(20) + PYTEST_FAILURES, exit_code=1
        ),
        setup_step(Job("unittest")).step("Run unittest", UNITTEST_FAILURES, exit_code=1),
        setup_step(Job("cpp / gtest")).step("Run gtest", GTEST_FAILURES, exit_code=1),
        setup_step(Job("distributed")).step("Test", PYTEST_TIMEOUT_THREAD, exit_code=1),
        setup_step(Job("crash")).step("Test", PYTEST_SEGFAULT, exit_code=139),
        setup_step(Job("build", with_job_file=False)).step("Compile", ["make: *** [all] Error 2"], exit_code=2),
    ]
