"""`scrub minimize FILE`: shrink a repro while it keeps raising the error it raises now."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import typer

from app.cli.output import announce_written, emit_json, fail, read_repro, stderr


def register(app: typer.Typer) -> None:
    app.command("minimize")(minimize_command)


def minimize_command(
    file: Path = typer.Argument(..., help="The repro to shrink.", show_default=False),
    out: Path | None = typer.Option(None, "-o", "--out", help="Where to write the result (default FILE.min.py)."),
    python: str | None = typer.Option(None, "--python", help="Environment label (SCRUB_ENVIRONMENTS) or interpreter path."),
    jobs: int = typer.Option(os.cpu_count() or 1, "--jobs", "-j", min=1, help="Candidates run in parallel."),
    timeout: float = typer.Option(60.0, "--timeout", min=1, help="Seconds per candidate run."),
    budget: float | None = typer.Option(
        None, "--budget", min=1, help="Stop shrinking this many seconds after the start (the final cold re-check comes after)."),
    max_candidates: int | None = typer.Option(
        None, "--max-candidates", min=1, help="Stop after this many candidate runs (a budget that gives the same result on any machine)."),
    expect: str | None = typer.Option(None, "--expect", help='Failure to keep: "Class: message", "timeout" or "signal N".'),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
) -> None:
    """Shrink FILE to a few lines that still fail the same way (same exception class and message)."""
    from app.engine.minimize import CouldNotMinimize, code_lines
    from app.engine.minimize.oracle import signature_of
    from app.engine.minimize.probe import probed
    from app.engine.minimize.problem import MAX_SOURCE_BYTES, check_size
    from app.engine.minimize.session import (
        NothingToKeep,
        minimize_repro,
        parse_expected,
    )

    if file.is_file() and file.stat().st_size > MAX_SOURCE_BYTES:  # before reading or parsing it
        try:
            check_size(file.read_text(encoding="utf-8", errors="replace"))
        except CouldNotMinimize as error:
            fail(f"{file}: {error}")
    source = read_repro(file)
    out = out or file.with_suffix(".min.py")
    started = time.monotonic()  # wall_s: the whole command's work, cold runs included
    from app.engine.sandbox.runner import SandboxUnavailable

    try:
        cold_run, warm_run, close = _runners(_interpreter(python), jobs, source)
    except SandboxUnavailable as error:  # no bwrap, or no user namespaces for an ordinary user
        fail(str(error))
        return
    try:
        expected = parse_expected(expect) if expect else None
        if expected is not None:  # the original, cold, once: before any candidate runs
            _check_expected(file, expected, signature_of(cold_run(probed(source), timeout), source))
        with _progress_bar(enabled=stderr.is_terminal) as on_progress:
            outcome = minimize_repro(
                source, run=warm_run, cold_run=cold_run, jobs=jobs, timeout_s=timeout, budget_s=budget,
                max_candidates=max_candidates, expected=expected, progress=on_progress,
            )
    except (NothingToKeep, CouldNotMinimize) as error:
        fail(f"{file}: {error}")
        return
    finally:
        close()
    original_copy = original_copy_path(out)
    original_copy.write_text(source)
    out.write_text(outcome.result.source)
    result = outcome.result
    summary = {
        "original_lines": code_lines(source),
        "final_lines": result.final_lines,
        "candidates": result.stats.candidates,
        "accepted": result.stats.accepted,
        "wall_s": round(time.monotonic() - started, 2),
        "signature": outcome.signature.describe(),
        "output": str(out),
        "original": str(original_copy),
        "reproduces": outcome.reproduces,
        "timed_out": result.timed_out,
    }
    if as_json:
        emit_json(summary)
    else:
        stderr.print(result.source, markup=False, highlight=False)
        stderr.print(
            f"{summary['original_lines']} -> {summary['final_lines']} lines, {summary['candidates']} candidates "
            f"in {summary['wall_s']} s; keeps [bold]{summary['signature']}[/bold]; "
            f"reproduces cold: {'yes' if outcome.reproduces else '[red]no[/red]'}"
        )
    announce_written(out, result.final_lines, f"original kept as {original_copy}")
    if not outcome.reproduces:
        raise typer.Exit(1)


def _check_expected(file: Path, expected, observed) -> None:
    """`--expect` the original does not meet: nothing to keep (`NothingToKeep`, exit 2)."""
    from app.engine.minimize.session import NothingToKeep

    if observed is None:
        raise NothingToKeep("the program runs without error: there is no failure to keep")
    if not expected.matches(observed):
        raise NothingToKeep(f"it fails with {observed.describe()}, not with the expected {expected.describe()}")


def original_copy_path(out: Path) -> Path:
    """Where the original is kept beside the result: `repro.min.py` -> `repro.orig.py`."""
    base = out.name[: -len(".min.py")] if out.name.endswith(".min.py") else out.stem
    return out.with_name(base + ".orig.py")


def _interpreter(python: str | None) -> str:
    """`--python`: a label from SCRUB_ENVIRONMENTS, a path, or this interpreter."""
    if python is None:
        return sys.executable
    from app.settings import get_settings

    return get_settings().environment_map.get(python, python)


def _runners(python: str, jobs: int, source: str):
    """(cold_run, warm_run, close): a fresh sandbox for the checks, the fork server for candidates."""
    from app.engine.minimize.runners import sandbox_runners, zygote_for

    return sandbox_runners(python, jobs, zygote=zygote_for(source))


class _progress_bar:
    """Progress on stderr: a rich status line on a terminal, plain lines otherwise (`ProgressLines`)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __enter__(self):
        if not self.enabled:
            return ProgressLines(lambda line: print(line, file=sys.stderr, flush=True))
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self._bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                             console=stderr, transient=True)
        self._bar.start()
        task = self._bar.add_task("minimizing")

        def update(p) -> None:
            self._bar.update(task, description=(
                f"{p.candidates} tried, {p.accepted} accepted, {p.lines} lines / {p.tokens} tokens ({p.pass_name})"))

        return update

    def __exit__(self, *exc) -> None:
        if self.enabled:
            self._bar.stop()


class ProgressLines:
    """Progress for a log or a pipe (stderr not a terminal): one line every `every` candidates
    or `seconds` seconds, whichever comes first, so a long run is never silent."""

    def __init__(self, write, every: int = 50, seconds: float = 5.0, clock=time.monotonic):
        self.write, self.every, self.seconds, self.clock = write, every, seconds, clock
        self.started = self.last_time = clock()
        self.last_count = 0

    def __call__(self, p) -> None:
        now = self.clock()
        if p.candidates - self.last_count < self.every and now - self.last_time < self.seconds:
            return
        self.last_count, self.last_time = p.candidates, now
        self.write(f"minimizing: {p.candidates} tried, {p.accepted} accepted, {p.lines} lines / "
                   f"{p.tokens} tokens ({p.pass_name}), {now - self.started:.0f} s")
