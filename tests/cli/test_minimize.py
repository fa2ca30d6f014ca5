"""`scrub minimize`: refuses a program with nothing to keep; shrinks one that fails (torch-free)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from app.cli.main import app
from app.engine.sandbox.userns import current_mode
from tests.engine.sandbox.modes import require_mode


@pytest.fixture(autouse=True)
def _sandbox():
    """The real sandbox in this process's mode: a missing bwrap fails under CI=true (skips locally)."""
    require_mode(current_mode())


def test_a_program_that_passes_is_refused_clearly(tmp_path):
    repro = tmp_path / "ok.py"
    repro.write_text("x = 1\nprint(x)\n")
    result = CliRunner().invoke(app, ["minimize", str(repro), "--json"])
    assert result.exit_code == 2
    assert "runs without error" in result.output
    assert not (tmp_path / "ok.min.py").exists()


def test_an_expectation_the_original_does_not_meet_is_refused_before_any_candidate_runs(tmp_path, monkeypatch):
    """With --expect the original is still run once, cold: passing (or failing another way) is an
    input error (exit 2) before the search, not after it (it used to try every candidate)."""
    from app.engine.minimize import session

    def no_search(*args, **kwargs):
        raise AssertionError("the search ran")

    monkeypatch.setattr(session, "minimize", no_search)
    passes, other = tmp_path / "ok.py", tmp_path / "other.py"
    passes.write_text("x = 1\nprint(x)\n")
    other.write_text("raise KeyError('weight')\n")
    refused = CliRunner().invoke(app, ["minimize", str(passes), "--expect", "RuntimeError: boom"])
    assert refused.exit_code == 2 and "runs without error" in refused.stderr, refused.output
    different = CliRunner().invoke(app, ["minimize", str(other), "--expect", "RuntimeError: boom"])
    assert different.exit_code == 2 and "KeyError" in different.stderr and "RuntimeError: boom" in different.stderr
    assert not (tmp_path / "ok.min.py").exists() and not (tmp_path / "other.min.py").exists()


def test_minimize_json_summary_and_files(tmp_path):
    repro = tmp_path / "bug.py"
    repro.write_text(
        "import logging\nlogging.basicConfig()\n"
        "def helper(values):\n    total = sum(values)\n    return {'total': total}['count']\n"
        "data = [1, 2, 3]\nprint('starting')\nresult = helper(data)\nprint(result)\n"
    )
    out = tmp_path / "small.py"
    result = CliRunner().invoke(app, ["minimize", str(repro), "-o", str(out), "--json", "--jobs", "1", "--max-candidates", "500"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["signature"] == "KeyError: 'count'"
    assert summary["reproduces"] is True and summary["final_lines"] == 1 and summary["original_lines"] == 8
    assert "['count']" in out.read_text() and "logging" not in out.read_text()
    assert (tmp_path / "small.orig.py").read_text() == repro.read_text()
    assert set(summary) >= {"original_lines", "final_lines", "candidates", "accepted", "wall_s",
                            "signature", "output", "reproduces"}


def test_every_written_file_is_announced_and_the_original_is_kept_beside_it(tmp_path):
    repro = tmp_path / "repro.py"
    repro.write_text("import os\nx = 1\ny = {}\nprint(x)\nprint(y['missing'])\n")
    result = CliRunner().invoke(app, ["minimize", str(repro), "--jobs", "1", "--max-candidates", "500"])
    assert result.exit_code == 0, result.output
    minimized, original = tmp_path / "repro.min.py", tmp_path / "repro.orig.py"
    assert original.read_text() == repro.read_text()
    lines = len([line for line in minimized.read_text().splitlines() if line.strip()])
    assert f"wrote {minimized} ({lines} line{'s' if lines != 1 else ''}); original kept as {original}" in \
        " ".join(result.stderr.split())


def test_a_repro_that_does_not_compile_is_not_minimized(tmp_path):
    repro = tmp_path / "repro.py"
    repro.write_text("def broken(:\n    pass\n")
    result = CliRunner().invoke(app, ["minimize", str(repro)])
    assert result.exit_code == 2 and "does not compile" in result.stderr
    assert not (tmp_path / "repro.min.py").exists() and not (tmp_path / "repro.orig.py").exists()


def test_max_candidates_stops_the_shrinking_at_that_many_runs(tmp_path):
    # uncapped, this shrinks to one line in about 46 candidate runs
    steps = "".join(f"f{i} = len(b) + {i}\nprint('step', f{i})\n" for i in range(12))
    repro = tmp_path / "repro.py"
    repro.write_text("a = 1\nb = [a, 2, 3]\nc = {'x': b}\n" + steps + "key = 'mis' + 'sing'\nprint(c[key])\n")
    result = CliRunner().invoke(app, ["minimize", str(repro), "--json", "--jobs", "1", "--max-candidates", "6"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["candidates"] == 6 and summary["reproduces"] is True
    assert 1 < summary["final_lines"] < summary["original_lines"]  # shrank, stopped short of the fixpoint


def test_a_program_over_the_size_limit_is_refused_before_a_sandbox_starts(tmp_path, monkeypatch):
    from app.cli import minimize as command
    from app.engine.minimize.problem import MAX_SOURCE_BYTES

    monkeypatch.setattr(command, "_runners", lambda *a: (_ for _ in ()).throw(AssertionError("started")))
    repro = tmp_path / "huge.py"
    repro.write_text("x = 1\n" * (MAX_SOURCE_BYTES // 6 + 10))
    result = CliRunner().invoke(app, ["minimize", str(repro)])
    assert result.exit_code == 2 and "the minimizer takes programs up to 0.5 MB" in " ".join(result.stderr.split())
    assert result.stderr.count("error:") == 1 and "Traceback" not in result.output


def test_progress_lines_when_stderr_is_not_a_terminal():
    from app.cli.minimize import ProgressLines
    from app.engine.minimize import Progress

    now, lines = [0.0], []
    progress = ProgressLines(lines.append, every=50, seconds=5.0, clock=lambda: now[0])
    for count in range(1, 121):  # 120 fast candidates: a line per 50
        progress(Progress(count, 0, 100, 10, "delete_statements"))
    assert [line.split(",")[0] for line in lines] == ["minimizing: 50 tried", "minimizing: 100 tried"]
    now[0] = 12.0  # one slow candidate: a line after a few seconds, however few were tried
    progress(Progress(121, 3, 90, 9, "inline_functions"))
    assert lines[-1] == "minimizing: 121 tried, 3 accepted, 9 lines / 90 tokens (inline_functions), 12 s"


def test_a_run_with_output_to_a_pipe_prints_progress_lines(tmp_path):
    repro = tmp_path / "repro.py"
    chain = "v0 = 1\n" + "".join(f"v{i} = v{i - 1} + 1\n" for i in range(1, 60))  # each one needed
    repro.write_text(chain + "print({}[v59 > 0 and 'missing'])\n")
    result = CliRunner().invoke(app, ["minimize", str(repro), "--jobs", "1", "--max-candidates", "120"])
    assert result.exit_code == 0, result.output
    assert "minimizing: 50 tried" in result.stderr and "minimizing: 100 tried" in result.stderr
