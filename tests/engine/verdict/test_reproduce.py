"""Outcome classification (pure) and `reproduce` end to end (sandboxed, without torch)."""

from __future__ import annotations

import pytest

from app.engine.sandbox.capture import CapturedOutput
from app.engine.verdict.flaky import SequentialRule
from app.engine.sandbox.forkserver import ForkServer
from app.engine.verdict.reproduce import aggregate, read_process, reproduce
from app.engine.sandbox.runner import ProcessResult
from app.engine.verdict.signature import parse_expected
from tests.engine.sandbox.helpers import needs_bwrap, spec

TRACEBACK = "Traceback (most recent call last):\n  File \"/tmp/repro.py\", line 1, in <module>\n{}\n"


def process(exit_code=0, signal=None, timed_out=False, output="") -> ProcessResult:
    return ProcessResult(exit_code, signal, timed_out, 0.5, CapturedOutput(output.encode(), b"", len(output)), "cold")


def run_of(**kwargs):
    return read_process(process(**kwargs), python="3.11.7", torch_version="2.13.0")


def test_outcomes_follow_the_seed():
    assert run_of().outcome == "passed"
    error = run_of(exit_code=1, output=TRACEBACK.format("RuntimeError: boom"))
    assert (error.outcome, error.exception, error.message) == ("error", "RuntimeError", "boom")
    memory = run_of(exit_code=1, output=TRACEBACK.format("MemoryError"))
    assert (memory.outcome, memory.signature) == ("error", "MemoryError")
    segv = run_of(exit_code=139, signal=11, output="Fatal Python error: Segmentation fault\n")
    assert (segv.outcome, segv.signal, segv.signature) == ("crash", "SIGSEGV", "Fatal Python error: Segmentation fault")
    oom = run_of(exit_code=137, signal=9)
    assert (oom.outcome, oom.signal, oom.signature) == ("crash", "SIGKILL", "Signal: SIGKILL")
    assert run_of(exit_code=None, timed_out=True).outcome == "timeout"
    assert run_of(exit_code=152, signal=24).outcome == "timeout"  # SIGXCPU: the CPU limit
    exited = run_of(exit_code=3)
    assert (exited.outcome, exited.signature) == ("error", "SystemExit: 3")
    assert (error.python, error.torch_version) == ("3.11.7", "2.13.0")


def test_aggregate_picks_most_common_failure_and_counts_rate():
    runs = [run_of(), run_of(exit_code=1, output=TRACEBACK.format("ValueError: x")),
            run_of(exit_code=1, output=TRACEBACK.format("RuntimeError: y")),
            run_of(exit_code=1, output=TRACEBACK.format("RuntimeError: y"))]
    result = aggregate(runs, None)
    assert (result.runs, result.failures, result.rate, result.verdict) == (4, 3, 0.75, "flaky")
    assert result.signature == "RuntimeError: y" and result.match is None
    assert result.run_outcomes == ("passed", "error", "error", "error")


def test_expected_error_defines_failure_and_match():
    runs = [run_of(exit_code=1, output=TRACEBACK.format("RuntimeError: must match the size of b"))] * 2
    same = aggregate(runs, parse_expected("RuntimeError: must match the size"))
    assert (same.match, same.failures, same.verdict) == ("same", 2, "deterministic")
    other = aggregate(runs, parse_expected("RuntimeError: expected scalar type Float"))
    assert (other.match, other.failures, other.verdict) == ("different", 0, "passes")
    passed = aggregate([run_of()], parse_expected("RuntimeError: x"))
    assert passed.match == "passes"
    hang = aggregate([run_of(exit_code=None, timed_out=True)], parse_expected("timeout"))
    assert hang.match == "same"
    assert aggregate([run_of(exit_code=None, timed_out=True)], parse_expected("RuntimeError: x")).match == "different"


def test_to_dict_is_json_ready():
    data = aggregate([run_of(exit_code=1, output=TRACEBACK.format("RuntimeError: boom"))], None).to_dict()
    for key in ("outcome", "exception", "message", "signature", "exit_code", "signal", "runs", "failures",
                "rate", "interval", "duration_s", "python", "torch_version", "output_tail"):
        assert key in data
    assert "parsed" not in data and isinstance(data["interval"], list)


@needs_bwrap
def test_single_run_is_cold_and_records_versions():
    result = reproduce("raise RuntimeError('boom')", spec(), timeout_s=20, expect="RuntimeError: boom")
    assert (result.mode, result.outcome, result.match, result.runs) == ("cold", "error", "same", 1)
    assert result.python.count(".") == 2


@needs_bwrap
def test_adaptive_runs_through_one_fork_server():
    with ForkServer(spec(), preload=()) as server:
        deterministic = reproduce("raise ValueError('always')", spec(), timeout_s=10, adaptive=True, server=server)
        assert (deterministic.verdict, deterministic.runs) == ("deterministic", SequentialRule().runs_to_decide_deterministic)
        assert deterministic.mode == "fork"
        source = "import os, sys\nsys.exit(int.from_bytes(os.urandom(1), 'big') % 2)"
        flaky = reproduce(source, spec(), timeout_s=10, adaptive=True, server=server,
                          rule=SequentialRule(flaky_min_runs=4, max_runs=40))
        assert flaky.verdict == "flaky" and 0 < flaky.failures < flaky.runs
        low, high = flaky.interval
        assert low <= flaky.rate <= high


@pytest.mark.torch
@needs_bwrap
def test_torch_repro_cold_matches_expected_error():
    result = reproduce("import torch\ntorch.ones(2, 3) + torch.ones(4)", spec(memory_mb=4096), timeout_s=120,
                       expect="RuntimeError: must match the size")
    assert (result.outcome, result.match, result.mode) == ("error", "same", "cold")
    assert result.torch_version and result.torch_version.startswith("2.")
