"""`scrub fuzz (--seed N | PROGRAM.py) [--repo PATH] [--json]`: the fuzz job (seed 000) here.

The repository at PATH (default: the current directory; a git checkout or a bare repo) is
the target: its own fuzzer runs with the seed in the sandbox (or PROGRAM.py is the fuzzed
program), the test is written and verified, `SCRUB_FIX_COMMAND` (if set) is tried and
verified, and the commits land on the branch `scrub/fuzz-<seed>` of PATH itself. There is no
GitHub here, so no pull request: the report (stdout) says where the branch is. Exit code 0
for Success and Partial, 1 for Failed, 2 for bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from app.cli.output import emit_json, fail, stderr
from app.domain import RunStatus


def run_fuzz(repo_path: Path, settings: Any, *, seed: int | None, program: str, ref: str = "",
             echo: Any = None) -> dict[str, Any]:
    from app.pipelines.base import run_pipeline
    from app.pipelines.fuzz.stages import STAGES
    from app.pipelines.memory import MemoryRunContext

    params = {"repo": f"local/{repo_path.resolve().name.removesuffix('.git')}", "remote": str(repo_path.resolve()),
              "fuzz-seed": "" if seed is None else str(seed), "fuzzed-program": program, "ref": ref,
              "trigger": "cli", "offline": True}
    ctx = MemoryRunContext(settings=settings, echo=echo, params=params)
    finished = run_pipeline(STAGES, ctx, any_queue=True)
    state: dict[str, Any] = {}
    for record in ctx.stages:
        state.update(record.output)
    return {
        "status": finished.status,
        "report_status": state.get("report_status"),
        "error": state.get("error"),
        "failing_devices": state.get("failing_devices"),
        "test": (state.get("generated") or {}).get("path"),
        "branch": state.get("branch"),
        "commits": state.get("commits", []),
        "fix": {k: v for k, v in (state.get("fix") or {}).items() if k in ("verified", "summary", "files")},
        "stages": [{"stage": r.stage, "status": r.status, "summary": r.summary} for r in ctx.stages],
        "report": (ctx.artifacts.get("report.md") or ("", ""))[1],
    }


def fuzz_command(
    program: Path | None = typer.Argument(None, metavar="[PROGRAM.py]", help="a fuzzed program (instead of --seed)"),
    seed: int | None = typer.Option(None, "--seed", help="a seed of the repository's own fuzzer"),
    repo: Path = typer.Option(Path("."), "--repo", help="the target repository (a checkout or a bare repo)"),
    ref: str = typer.Option("", "--ref", help="branch or commit to work on (default: the default branch)"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object on stdout"),
) -> None:
    """From a fuzz seed or a fuzzed program to a failing test, a verified fix and two commits."""
    from app.pipelines.memory import stderr_echo
    from app.settings import get_settings

    if (seed is None) == (program is None):
        fail("give exactly one of --seed N or PROGRAM.py")
    source = ""
    if program is not None:
        if not program.is_file():
            fail(f"{program} is not a file")
        source = program.read_text(errors="replace")
    if not ((repo / ".git").exists() or (repo / "HEAD").is_file()):
        fail(f"{repo} is not a git repository")
    outcome = run_fuzz(repo, get_settings(), seed=seed, program=source, ref=ref, echo=stderr_echo)
    if as_json:
        emit_json(outcome)
    else:
        stderr.print(f"{outcome['report_status']}: branch {outcome['branch'] or '(none)'}, "
                     f"{len(outcome['commits'])} commit(s)")
        typer.echo(outcome["report"])
    if outcome["report_status"] == "Failed" or outcome["status"] == RunStatus.failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("fuzz")(fuzz_command)
