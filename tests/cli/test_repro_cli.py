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
    assert allowed.exit_code == 0, allowed.output
    assert json.loads(allowed.stdout.strip().splitlines()[-1])["outcome"] == "passed"
