"""`scrub --version`, help, and the progress helper's terminal-only bars."""

from __future__ import annotations

from importlib.metadata import version

from typer.testing import CliRunner

from app.cli.main import app
from app.cli.progress import counted


def test_version_names_scrubbot_and_torch():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"scrub {version('scrubbot')} (torch {version('torch')} in this interpreter)"


def test_help_lists_the_exit_codes_and_the_new_commands():
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    text = " ".join(result.stdout.replace("│", " ").split())
    assert "Exit codes: 0 = ran and reproduced" in text and "2 = usage or input error" in text
    for command in ("env", "demo", "repro", "bisect"):
        assert command in result.stdout


def test_progress_is_silent_when_stderr_is_not_a_terminal(capsys):
    with counted("running", 3) as advance:
        for _ in range(3):
            advance(description="step")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
