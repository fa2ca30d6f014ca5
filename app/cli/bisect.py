"""`scrub bisect FILE --envs 2.11,2.12,2.13 [--expect SIG] [--json]`: first environment where the
outcome changes.

`--envs` lists environments oldest first: labels from `SCRUB_ENVIRONMENTS` or provisioned
releases (`scrub env add 2.14.1`; `2.14` means the newest provisioned 2.14.x; `--provision`
provisions missing full releases first), or `LABEL=PYTHON` pairs. The outcome of a run is
"reproduces `--expect`" when given (`RuntimeError: message`, `segfault`, `hang`), else its
shape: passed, a timeout, a signal, or an exception class. Each round probes `--k`
environments in parallel (2: thirds). The answer says `fixed in X (still fails in W)` or
`regressed in X (passes in W)`. Exit 0 when the outcome changes somewhere, 1 when not.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import typer

from app.cli.output import NOT_REPRODUCED, OK, emit_json, fail, read_repro, stderr


def _lookup(item: str, configured: dict[str, str]) -> tuple[str, str] | None:
    """A label exactly, else a release prefix (`2.14` -> the newest `2.14.x`)."""
    from app.torch_releases import version_key

    if item in configured:
        return item, configured[item]
    matches = sorted((label for label in configured if label.startswith(item + ".")), key=version_key)
    return (matches[-1], configured[matches[-1]]) if matches else None


def resolve_envs(spec: str, configured: dict[str, str]) -> dict[str, str]:
    """`"2.11,2.13"` via the configured map, `"a=/py/a,b=/py/b"` as given, or a mix; order kept."""
    envs: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        label, sep, python = item.partition("=")
        if sep:
            envs[label.strip()] = python.strip()
        elif found := _lookup(item, configured):
            envs[found[0]] = found[1]
        else:
            raise ValueError(unavailable_message(item, configured))
    if len(envs) < 2:
        raise ValueError("bisection needs at least two environments")
    return envs


def unavailable_message(item: str, configured: dict[str, str]) -> str:
    """Why `item` cannot be used, and a command that would make it available. `env add` takes
    full releases only, so a short `2.12` gets `2.12.0` (any later 2.12.x does as well)."""
    import re

    known = ", ".join(configured) or "none"
    head = f"environment {item!r} is not available (known: {known}); "
    if re.fullmatch(r"\d+\.\d+", item):
        release = f"{item}.0"
        return (head + f"`{item}` means the newest provisioned {item}.x and none is: provision one with "
                f"`scrub env add {release}` (or a later {item}.x), or list `{release}` with --provision; "
                "or use LABEL=PYTHON")
    return head + f"provision it with `scrub env add {item}` (or pass --provision), or use LABEL=PYTHON"


def provision_missing(spec: str, settings: Any) -> None:
    """`--provision`: every full release in `spec` that is not available yet is provisioned."""
    from app.cli.envs import provision_release
    from app.torch_releases import parse_version

    for item in filter(None, (part.strip() for part in spec.split(","))):
        if "=" in item or _lookup(item, settings.nameable_environments):  # read again: it grows
            continue
        try:
            parse_version(item)
        except ValueError:
            continue  # resolve_envs reports it
        provision_release(item, settings)


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

    def fails(label: str) -> bool | None:
        if label not in runs:
            return None
        if reported:
            return classify(reported, runs[label]) == REPRODUCES
        return runs[label]["outcome"] != "passed"

    return {
        "summary": bisection.describe_change(found, fails),
        "first_changed": found.first_changed,
        "last_unchanged": found.last_unchanged,
        "oldest_outcome": oldest,
        "probes": {label: describe(runs[label]) for label in labels if label in runs},
        "rounds": found.rounds,
        "expect": expect,
    }


def bisect_command(
    file: Path = typer.Argument(..., help="the repro script", show_default=False),
    envs: str = typer.Option(..., "--envs", help="environments oldest first: labels, releases or LABEL=PYTHON"),
    provision: bool = typer.Option(False, "--provision", help="provision listed releases that are missing"),
    expect: str = typer.Option(None, "--expect", help="the error that counts as reproducing"),
    k: int = typer.Option(2, "--k", min=1, help="environments probed in parallel per round"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object on stdout"),
) -> None:
    """Find the first environment where the repro's outcome changes."""
    from app.settings import get_settings

    source = read_repro(file)
    settings = get_settings()
    if provision:
        provision_missing(envs, settings)
    try:
        resolved = resolve_envs(envs, settings.nameable_environments)
        result = bisect_file(source, resolved, settings, expect=expect, k=k,
                             echo=lambda line: stderr.print(line, markup=False, highlight=False))
    except ValueError as exc:
        fail(str(exc))
    if as_json:
        emit_json(result)
    elif result["first_changed"]:
        typer.echo(result["summary"])
    else:
        typer.echo(f"no change across {', '.join(resolved)}: {result['oldest_outcome']}")
    raise typer.Exit(OK if result["first_changed"] else NOT_REPRODUCED)


def register(app: typer.Typer) -> None:
    app.command("bisect")(bisect_command)
