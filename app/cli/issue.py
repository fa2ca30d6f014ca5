"""`scrub issue FILE_OR_URL [--json]`: the whole issue pipeline, printing instead of posting.

FILE is a saved `{"issue": {...}, "comments": [...]}` in GitHub's REST shapes; a URL
`https://github.com/o/r/issues/N` or `o/r#N` is fetched (read only) with the configured
credentials, or anonymously when there are none (public repositories).
The comment goes to stdout; progress to stderr. `--json` prints one object: verdict, labels,
close, comment, selected repro, reported error, reproduction, bisection, minimized repro,
diagnosis (the catalog's patterns and each experiment's finding), the offered failing test and
its checks, review findings, the report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from app import approvals
from app.cli.offline_github import OfflineGitHub, load_saved, parse_issue_url, repo_and_number
from app.cli.output import NOT_REPRODUCED, OK, emit_json, fail, stderr
from app.domain import Verdict


def _load(source: str) -> tuple[OfflineGitHub, str, int]:
    target = parse_issue_url(source)
    if target is not None:
        from app.cli.github_reads import read

        repo, number = target
        issue, comments = read(f"issue {repo}#{number}", lambda client: (
            client.get_issue(repo, number), client.list_issue_comments(repo, number)))
        if issue.get("pull_request"):
            fail(f"{repo}#{number} is a pull request, not an issue")
        return OfflineGitHub(issue, comments), repo, number
    path = Path(source)
    if not path.is_file():
        fail(f"{source} is neither a file, nor an issue URL https://github.com/OWNER/REPO/issues/N, nor OWNER/REPO#N")
    try:
        issue, comments = load_saved(path)
    except ValueError as exc:
        fail(f"cannot read {path}: {exc}")
    repo, number = repo_and_number(issue)
    return OfflineGitHub(issue, comments), repo, number


def run_issue(github: OfflineGitHub, repo: str, number: int, settings: Any, *, echo: Any = None) -> dict[str, Any]:
    """Run every stage here (any queue) and gather what the pipeline decided."""
    from app.pipelines.base import run_pipeline
    from app.pipelines.memory import MemoryRunContext
    from app.pipelines.issue.stages import STAGES

    ctx = MemoryRunContext(github=github, settings=settings, echo=echo,
                           params={"repo": repo, "issue": number, **approvals.trusted_local("local CLI user")})
    finished = run_pipeline(STAGES, ctx, any_queue=True)
    state: dict[str, Any] = {}
    for record in ctx.stages:
        state.update(record.output)
    return {
        "issue": f"{repo}#{number}",
        "status": finished.status,
        "verdict": state.get("verdict"),
        "labels": github.labels,
        "close": github.closed,
        "comment": github.comment,
        "selected_repro": state.get("repro"),
        "reported_error": state.get("reported"),
        "triage": state.get("triage"),
        "findings": state.get("findings", []),
        "reproduction": state.get("reproduction"),
        "bisect": state.get("bisect"),
        "minimized": state.get("minimized"),
        "diagnosis": state.get("diagnosis"),
        "test": state.get("offered_test"),
        "test_checks": state.get("test_checks", []),
        "stages": [{"stage": r.stage, "status": r.status, "summary": r.summary,
                    "seconds": round(r.ended - r.started, 3) if r.ended else None} for r in ctx.stages],
        "report": (ctx.artifacts.get("report.md") or ("", ""))[1],
    }


def issue_command(
    source: str = typer.Argument(..., metavar="FILE_OR_URL", help="saved issue JSON or an issue URL"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object on stdout"),
) -> None:
    """Scrub an issue: pick its repro, triage, reproduce in the sandbox, bisect, minimize; print the comment.

    FILE_OR_URL: a saved issue JSON, https://github.com/OWNER/REPO/issues/N, or OWNER/REPO#N.
    Exit 0 when it reproduces, 1 when it does not (fixed, not actionable, ...), 2 on bad input."""
    from app.pipelines.memory import stderr_echo
    from app.settings import get_settings

    github, repo, number = _load(source)
    outcome = run_issue(github, repo, number, get_settings(), echo=stderr_echo)
    code = OK if outcome["verdict"] == Verdict.reproduces else NOT_REPRODUCED
    if as_json:
        emit_json(outcome)
        raise typer.Exit(code)
    stderr.print(f"verdict: {outcome['verdict']}; labels +{outcome['labels']['add']} -{outcome['labels']['remove']}"
                 + (f"; would close ({outcome['close']})" if outcome["close"] else ""))
    typer.echo(outcome["comment"] or "(no comment would be posted)")
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("issue")(issue_command)

