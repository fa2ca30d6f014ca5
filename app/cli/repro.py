"""`scrub repro FILE`: run a repro in the sandbox, classify it, report the failure rate.

Local files are treated as untrusted like any other input: they run in the bubblewrap
sandbox. `SCRUB_SANDBOX=none` is accepted only together with `--trusted`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from app.cli.output import NOT_REPRODUCED, OK, emit_json, fail, read_repro, stderr
from app.cli.progress import counted

JSON_FIELDS = ("outcome", "exception", "message", "signature", "exit_code", "signal", "runs", "failures",
               "rate", "interval", "verdict", "duration_s", "python", "torch_version", "mode", "output_tail")


def resolve_python(option: str | None, environment_map: dict[str, str]) -> tuple[str, str]:
    """`--python` as an environment label or an interpreter path -> (label, python)."""
    if not option:
        label = list(environment_map)[-1]
        return label, environment_map[label]
    if option in environment_map:
        return option, environment_map[option]
    if Path(option).is_file():
        return option, option
    fail(f"--python {option!r} is neither a configured environment ({', '.join(environment_map)}) nor a file")
    raise AssertionError("unreachable")


def repro(
    file: Path = typer.Argument(..., help="the repro script", show_default=False),
    python: str = typer.Option(None, "--python", help="environment label or interpreter path"),
    runs: int = typer.Option(1, "--runs", min=1, max=1000, help="how many times to run it"),
    adaptive: bool = typer.Option(False, "--adaptive", help="stop once deterministic/flaky/passes is decided"),
    timeout: float = typer.Option(None, "--timeout", min=0.1, help="seconds per run (default SCRUB_REPRO_TIMEOUT)"),
    expect: str = typer.Option(None, "--expect", help='expected error, e.g. "RuntimeError: must match the size"'),
    trusted: bool = typer.Option(False, "--trusted", help="allow SCRUB_SANDBOX=none for this (trusted) file"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object on stdout"),
) -> None:
    """Run FILE in the sandbox; outcome, signature, and over --runs the rate and its interval.

    Exit 0 when it reproduced (failed; with --expect: failed that way), 1 when it did not, 2 on
    bad input (no such file, does not compile)."""
    from app.engine.sandbox.environments import InterpreterError
    from app.engine.sandbox.gpu import gpu_facts
    from app.engine.verdict.reproduce import RunResult, reproduce
    from app.engine.sandbox.runner import Limits, SandboxSpec, UntrustedCodeRefused
    from app.settings import get_settings

    from app.cli.preflight import sandbox_problem

    source = read_repro(file)
    settings = get_settings()
    if not (trusted and settings.resolved_sandbox == "none") and (problem := sandbox_problem(settings)):
        if settings.resolved_sandbox == "none":
            fail("SCRUB_SANDBOX=none runs code unsandboxed; pass --trusted if you trust this file, "
                 "or unset SCRUB_SANDBOX to use bubblewrap")
        fail(problem)
    label, interpreter = resolve_python(python, settings.environment_map)
    spec = SandboxSpec(kind=settings.resolved_sandbox, python=interpreter,
                       limits=Limits(memory_mb=settings.sandbox_memory_mb), gpu=settings.gpu)
    timeout_s = timeout or settings.repro_timeout

    failed = [0]

    stderr.print(f"running {file} with {label} ({spec.kind} sandbox, timeout {timeout_s:g}s)", markup=False)
    try:
        with counted("running", None if adaptive else runs, enabled=adaptive or runs > 1) as advance:
            def progress(index: int, run: RunResult) -> None:
                failed[0] += run.outcome != "passed"
                advance(description=f"run {index + 1}: {failed[0]} failed")

            result = reproduce(source, spec, timeout_s=timeout_s, runs=runs, adaptive=adaptive, expect=expect,
                               trusted=trusted, on_run=progress)
    except UntrustedCodeRefused:
        fail("SCRUB_SANDBOX=none runs code unsandboxed; pass --trusted if you trust this file, "
             "or use SCRUB_SANDBOX=bwrap")
    except (InterpreterError, RuntimeError, ValueError) as exc:
        fail(str(exc))
    data = {name: value for name, value in result.to_dict().items() if name in JSON_FIELDS}
    if expect:
        data["match"] = result.match
    gpu = gpu_facts() if settings.gpu else None  # the model, driver and CUDA a GPU run had
    if settings.gpu:
        data["gpu"] = gpu.to_dict() if gpu else None
    if as_json:
        emit_json(data)
    for line in summary_lines(result, expect):
        stderr.print(line, markup=False, highlight=False)
    if settings.gpu:
        stderr.print(f"GPU: {gpu.describe() if gpu else 'none found (no NVIDIA driver on this host)'}",
                     markup=False, highlight=False)
    raise typer.Exit(exit_code(result.failures, result.match if expect else None))


def summary_lines(result: Any, expect: str | None) -> list[str]:
    """What a person reads: the outcome, then how often it failed. With `--expect`, a run that
    failed another way counts as failed, not as passing."""
    lo, hi = result.interval
    where = f"python {result.python}, torch {result.torch_version}"
    lines = [f"{result.outcome}: {result.signature or 'no error'}"]
    if not expect:
        lines.append(f"{result.failures}/{result.runs} failed, rate {result.rate:.2f} (95% CI {lo:.2f}-{hi:.2f}), "
                     f"{result.verdict}; {where}")
        return lines
    failed = sum(outcome != "passed" for outcome in result.run_outcomes) or result.failures
    if result.failures == failed:
        lines.append(f"{failed}/{result.runs} failed with the expected error, rate {result.rate:.2f} "
                     f"(95% CI {lo:.2f}-{hi:.2f}), {result.verdict}; {where}" if failed else
                     f"0/{result.runs} failed: it passes; {where}")
    else:
        lines.append(f"{failed}/{result.runs} failed, {result.failures} with the expected error "
                     f"(rate {result.rate:.2f}, 95% CI {lo:.2f}-{hi:.2f}); {where}")
    lines.append(f"expected {expect!r}: {result.match}"
                 + (f" (it raised {result.signature})" if result.match == "different" and result.signature else ""))
    return lines


def exit_code(failures: int, match: str | None) -> int:
    """0: it reproduced (with an expectation: the expected error); 1: it did not."""
    if match is not None:
        return OK if match == "same" else NOT_REPRODUCED
    return OK if failures else NOT_REPRODUCED


def register(app: typer.Typer) -> None:
    app.command("repro")(repro)
