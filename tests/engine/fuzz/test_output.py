"""Reading a fuzzer's output (TorchFuzz's layout) into a program and its error."""

import pytest

from app.engine.fuzz.output import FuzzOutputError, parse_fuzz_output

FAILING = """Running: /tmp/x/prog.py
=== Program Output (Failure) ===
start
Traceback (most recent call last):
  File "/tmp/x/prog.py", line 3, in <module>
    torch.cat([a, b], dim=2)
IndexError: Dimension out of range (expected to be in range of [-2, 1], but got 2)

===============================
=== Program Source ===
import torch
a = torch.ones(2, 2)
torch.cat([a, a], dim=2)

======================
Program exited with code: 1
"""


def test_a_failing_seed_gives_the_program_and_its_error():
    finding = parse_fuzz_output(FAILING)
    assert finding.program == "import torch\na = torch.ones(2, 2)\ntorch.cat([a, a], dim=2)\n"
    assert finding.exception == "IndexError"
    assert finding.message.startswith("Dimension out of range")
    assert finding.exit_code == 1 and finding.program_path == "/tmp/x/prog.py"
    assert finding.error_line.startswith("IndexError: Dimension out of range")


def test_a_passing_seed_gives_nothing():
    assert parse_fuzz_output("Running: /tmp/p.py\n=== Program Output ===\nok\n") is None


def test_a_failure_without_a_program_or_with_broken_python_is_an_error():
    with pytest.raises(FuzzOutputError, match="no program source"):
        parse_fuzz_output("=== Program Output (Failure) ===\nboom\n=====\n")
    broken = FAILING.replace("torch.cat([a, a], dim=2)\n\n", "torch.cat([a, a\n\n")
    with pytest.raises(FuzzOutputError, match="not valid Python"):
        parse_fuzz_output(broken)


def test_a_fuzzer_that_did_not_run_is_an_error_not_a_clean_seed():
    import pytest

    from app.engine.fuzz.output import FuzzerDidNotRun, check_ran

    usage = "usage: fuzzer.py [-h] [--seed SEED]\nfuzzer.py: error: unrecognized arguments: --sed 3\n"
    with pytest.raises(FuzzerDidNotRun, match="exit code 2"):
        check_ran(usage, 2)
    with pytest.raises(FuzzerDidNotRun, match="exit code 2"):
        check_ran("python: can't open file 'tools/experimental/torchfuzz/torchfuzz.py': [Errno 2]\n", 2)
    with pytest.raises(FuzzerDidNotRun, match="without running a seed"):
        check_ran("usage: ...\n", 0, "tools/experimental/torchfuzz/fuzzer.py")
    check_ran("Using seed: 3, max_depth: 2\n=== Program Output ===\nok\n", 0, "tools/experimental/torchfuzz/fuzzer.py")
    check_ran("Running: /tmp/x.py\n=== Program Output (Failure) ===\nboom\n", 1)
