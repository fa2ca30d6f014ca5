"""`scrub repro`: one JSON object on stdout, clear errors, the sandbox by default."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from app.cli.main import app
from tests.engine.sandbox.helpers import needs_bwrap

runner = CliRunner()


@needs_bwrap
def test_json_output_has_every_field(tmp_path, monkeypatch):
    repro = tmp_path / "repro.py"
    repro.write_text("raise RuntimeError('The size of tensor a (3) must match the size of tensor b (4)')\n")
    monkeypatch.setenv("SCRUB_SANDBOX", "bwrap")
    result = runner.invoke(app, ["repro", str(repro), "--json", "--timeout", "20",
                                 "--expect", "RuntimeError: must match the size"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout.strip().splitlines()[-1])
    for key in ("outcome", "exception", "message", "signature", "exit_code", "signal", "runs", "failures",
                "rate", "interval", "duration_s", "python", "torch_version", "output_tail", "match"):
        assert key in data, key
    assert (data["outcome"], data["exception"], data["match"], data["runs"], data["failures"]) == \
        ("error", "RuntimeError", "same", 1, 1)


def test_missing_file_is_a_clear_error(tmp_path):
    result = runner.invoke(app, ["repro", str(tmp_path / "nope.py"), "--json"])
    assert result.exit_code == 2
    assert "no such file" in result.output


def test_unsandboxed_mode_needs_trusted_flag(tmp_path, monkeypatch):
    repro = tmp_path / "repro.py"
    repro.write_text("print('hello')\n")
    monkeypatch.setenv("SCRUB_SANDBOX", "none")
    refused = runner.invoke(app, ["repro", str(repro), "--json"])
    assert refused.exit_code == 2 and "--trusted" in refused.output
    allowed = runner.invoke(app, ["repro", str(repro), "--json", "--trusted", "--timeout", "20"])
    assert allowed.exit_code == 1, allowed.output  # it ran and did not reproduce (it passed)
    assert json.loads(allowed.stdout.strip().splitlines()[-1])["outcome"] == "passed"


def test_a_file_that_does_not_compile_is_an_input_error_not_a_verdict(tmp_path):
    repro = tmp_path / "broken.py"
    repro.write_text("import torch\nx = torch.ones(3\nprint(x)\n")
    result = runner.invoke(app, ["repro", str(repro), "--json"])
    assert result.exit_code == 2 and result.stdout == ""
    assert "does not compile" in result.stderr and "line 2" in result.stderr
    assert "SyntaxError" not in result.stdout


def test_a_directory_is_named_as_such(tmp_path):
    (tmp_path / "repro.py").write_text("raise ValueError\n")
    result = runner.invoke(app, ["repro", str(tmp_path)])
    assert result.exit_code == 2
    assert "is a directory" in result.stderr and "repro.py" in result.stderr and "no such file" not in result.stderr


@needs_bwrap
def test_exit_codes_say_whether_it_reproduced_as_expected(tmp_path, monkeypatch):
    monkeypatch.setenv("SCRUB_SANDBOX", "bwrap")
    repro = tmp_path / "repro.py"
    repro.write_text("raise KeyError('weight')\n")
    same = runner.invoke(app, ["repro", str(repro), "--timeout", "20", "--expect", "KeyError: 'weight'"])
    other = runner.invoke(app, ["repro", str(repro), "--timeout", "20", "--expect", "RuntimeError: size mismatch"])
    plain = runner.invoke(app, ["repro", str(repro), "--timeout", "20"])
    assert (same.exit_code, other.exit_code, plain.exit_code) == (0, 1, 0), (same.output, other.output)
    # It failed, with another error: the summary says so, not "0/1 failed ... passes".
    assert "0/1 failed" not in other.stderr and "passes" not in other.stderr
    assert "1/1 failed, 0 with the expected error" in other.stderr and "KeyError" in other.stderr
    assert "1/1 failed with the expected error" in same.stderr


@needs_bwrap
def test_repeated_runs_print_no_line_per_run_when_not_a_terminal(tmp_path, monkeypatch):
    monkeypatch.setenv("SCRUB_SANDBOX", "bwrap")
    repro = tmp_path / "repro.py"
    repro.write_text("print('ok')\n")
    result = runner.invoke(app, ["repro", str(repro), "--runs", "3", "--timeout", "20", "--json"])
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["runs"] == 3  # stdout is the JSON object alone
    assert "run 1" not in result.stderr and "run 2" not in result.stderr
    assert "0/3 failed" in result.stderr


@needs_bwrap
def test_a_gpu_workers_repro_states_the_gpu_it_ran_on(tmp_path, monkeypatch):
    from app.engine.sandbox import gpu

    driver = tmp_path / "nvidia"
    (driver / "gpus" / "0000:1b:00.0").mkdir(parents=True)
    (driver / "gpus" / "0000:1b:00.0" / "information").write_text("Model: \t\t NVIDIA H200\n")
    (driver / "version").write_text("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.124.06  Release\n")
    real = gpu.gpu_facts
    monkeypatch.setattr(gpu, "gpu_facts", lambda: real(driver, smi="/nonexistent"))
    monkeypatch.setenv("SCRUB_GPU", "true")
    repro = tmp_path / "repro.py"
    repro.write_text("raise RuntimeError('boom')\n")
    result = runner.invoke(app, ["repro", str(repro), "--json", "--timeout", "20"])
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["gpu"]["models"] == ["NVIDIA H200"] and data["gpu"]["driver"] == "570.124.06"
    assert "GPU: 1 x NVIDIA H200 (driver 570.124.06)" in result.output
