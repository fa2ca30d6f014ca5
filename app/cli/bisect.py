"""`scrub bisect FILE --envs 2.11,2.12,2.13 [--expect SIG] [--json]`: first environment where the
outcome changes.

`--envs` lists environments oldest first: labels from `SCRUB_ENVIRONMENTS`, or `LABEL=PYTHON`
pairs. The outcome of a run is "reproduces `--expect`" when given (`RuntimeError: message`,
`segfault`, `hang`), else its shape: passed, a timeout, a signal, or an exception class.
Each round probes `--k` environments in parallel (2: thirds).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import typer

from app.cli.output import emit_json, fail, stderr


def resolve_envs(spec: str, configured: dict[str, str]) -> dict[str, str]:
    """`"2.11,2.13"` via the configured map, `"a=/py/a,b=/py/b"` as given, or a mix; order kept."""
    envs: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        label, sep, python = item.partition("=")
        if sep:
            envs[label.strip()] = python.strip()
        elif item in configured:
            envs[item] = configured[item]
        else:
            known = ", ".join(configured) or "none"
            raise ValueError(f"environment {item!r} is not in SCRUB_ENVIRONMENTS (known: {known}); use LABEL=PYTHON")
    if len(envs) < 2:
        raise ValueError("bisection needs at least two environments")
    return envs


def _shape(run: dict[str, Any]) -> str:
    if run["outcome"] == "error":
        return f"error {run['exception']}"
    if run["outcome"] == "crash":
        return f"crash signal {run['signal']}"
    return run["outcome"]


def bisect_file(source: str, envs: dict[str, str], settings: Any, *, expect: str | None = None,
                k: int = 2, echo: Any = None) -> dict[str, Any]:
    from app.engine.verdict import bisect as bisection
    from app.engine.issue.markdown import reported_error
    from app.engine.verdict.classify import REPRODUCES, classify, describe
    from app.pipelines.issue import runner as issue_runner

    settings = settings.model_copy(update={"environments": ",".join(f"{k}={v}" for k, v in envs.items())})
    reported = reported_error(expect).to_dict() if expect and reported_error(expect) else None
    if expect and reported is None:
        raise ValueError(f"--expect {expect!r} is not `Class: message`, `segfault` or `hang`")
    runs: dict[str, dict[str, Any]] = {}
    labels = list(envs)

    def outcome(label: str) -> str:
        run = runs[label] = issue_runner.run_once(settings, source, label)
        if echo:
            echo(f"{label}: {describe(run)}")
        return REPRODUCES if reported and classify(reported, run) == REPRODUCES else _shape(run)

    oldest = outcome(labels[0])
    with ThreadPoolExecutor(max_workers=k) as pool:
        found = bisection.bisect(
            labels, lambda label: outcome(label) == oldest, k=k, known={labels[0]: True},
            run_all=lambda probe, batch: list(pool.map(probe, batch)),
        )
    return {
        "first_changed": found.first_changed,
        "last_unchanged": found.last_unchanged,
        "oldest_outcome": oldest,
        "probes": {label: describe(runs[label]) for label in labels if label in runs},
        "rounds": found.rounds,
        "expect": expect,
    }


def bisect_command(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="the repro script"),
    envs: str = typer.Option(..., "--envs", help="environments oldest first: labels or LABEL=PYTHON"),
    expect: str = typer.Option(None, "--expect", help="the error that counts as reproducing"),
    k: int = typer.Option(2, "--k", min=1, help="environments probed in parallel per round"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object on stdout"),
) -> None:
    """Find the first environment where the repro's outcome changes."""
    from app.settings import get_settings

    settings = get_settings()
    try:
        resolved = resolve_envs(envs, settings.environment_map)
        result = bisect_file(file.read_text(encoding="utf-8"), resolved, settings, expect=expect, k=k,
                             echo=lambda line: stderr.print(line, markup=False))
    except ValueError as exc:
        fail(str(exc))
    if as_json:
        emit_json(result)
    elif result["first_changed"]:
        typer.echo(f"first changed in {result['first_changed']} (after {result['last_unchanged']})")
    else:
        typer.echo(f"no change across {', '.join(resolved)}: {result['oldest_outcome']}")


def register(app: typer.Typer) -> None:
    app.command("bisect")(bisect_command)
