"""`scrub --version`, help, and the progress helper's terminal-only bars."""

from __future__ import annotations

import os
import subprocess
import sys
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


def _commands() -> list[list[str]]:
    import typer

    group = typer.main.get_command(app)
    found = [[]]
    for name, command in group.commands.items():
        found.append([name])
        found.extend([name, sub] for sub in getattr(command, "commands", {}))
    return found


def test_help_shows_no_type_noise_on_flags():
    """`--json  <bool>` says nothing a person needs: a flag takes no value."""
    for words in _commands():
        result = CliRunner().invoke(app, [*words, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (words, result.output)
        assert "<bool>" not in result.stdout, words
    repro = CliRunner().invoke(app, ["repro", "--help"], env={"COLUMNS": "200"}).stdout
    assert "<int range>" in repro or "<int" in repro  # options that take a value still say what


AS_SCRUB = "import sys; sys.argv[0] = 'scrub'; from app.cli.main import main; main()"  # the installed script


def test_shell_completion_is_offered_for_bash_zsh_and_fish(tmp_path):
    # What a shell's completion script asks `scrub` for, per shell (not `--show-completion`,
    # which detects the parent shell and so depends on how the tests were started).
    listed = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).stdout
    assert "--install-completion" in listed and "--show-completion" in listed
    asks = {
        "bash": {"_SCRUB_COMPLETE": "complete_bash", "COMP_WORDS": "scrub mi", "COMP_CWORD": "1"},
        "zsh": {"_SCRUB_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": "scrub mi"},
        "fish": {"_SCRUB_COMPLETE": "complete_fish", "_TYPER_COMPLETE_ARGS": "scrub mi",
                 "_TYPER_COMPLETE_FISH_ACTION": "get-args"},
    }
    for shell, env in asks.items():
        done = subprocess.run([sys.executable, "-c", AS_SCRUB], capture_output=True, text=True,
                              env={**os.environ, **env}, cwd=tmp_path, timeout=120)
        assert done.returncode == 0 and "minimize" in done.stdout and "repro" not in done.stdout, (shell, done)


def _scrub(args: list[str], env: dict[str, str], cwd) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app.cli.main", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, cwd=cwd, timeout=120)


def test_an_unreadable_config_file_is_one_sentence_and_exit_2(tmp_path):
    script = tmp_path / "repro.py"
    script.write_text("print(1)\n")
    done = _scrub(["repro", str(script)], {"SCRUB_CONFIG": str(tmp_path / "missing.env")}, tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "SCRUB_CONFIG=" in done.stderr and "is not a file this user can read" in done.stderr


def test_an_invalid_setting_names_the_variable_not_a_validation_traceback(tmp_path):
    script = tmp_path / "repro.py"
    script.write_text("print(1)\n")
    done = _scrub(["repro", str(script)], {"SCRUB_LEASE_S": "-1"}, tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "SCRUB_LEASE_S" in done.stderr and "greater than 0" in done.stderr
