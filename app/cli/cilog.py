"""`scrub ci-log FILE_OR_RUN_URL [--json]`: failing tests, signatures and hints from CI logs.

FILE is a run's log archive (the zip GitHub serves) or a plain text log. A run URL
(`https://github.com/o/r/actions/runs/N[/attempts/K]`) is fetched through the configured
GitHub client: its jobs, then its log archive into a temporary directory.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import typer
from rich.table import Table

from app.cli.output import emit_json, fail, stderr
from app.engine.cilogs.archive import LogReport, read_log
from app.engine.cilogs.fingerprint import short_fingerprint

RUN_URL = re.compile(
    r"^https?://[^/]+/(?P<repo>[\w.-]+/[\w.-]+)/actions/runs/(?P<run>\d+)(?:/attempts/(?P<attempt>\d+))?/?(?:[?#].*)?$"
)


def fetch_run_report(url: str) -> LogReport:
    """Download a run's jobs and log archive through the configured client and read them."""
    from app.github.connect import GitHubNotConfigured, github_client
    from app.settings import get_settings

    match = RUN_URL.match(url)
    if not match:
        fail(f"not a workflow run URL: {url} (expected https://github.com/OWNER/REPO/actions/runs/ID)")
    repo, run_id = match.group("repo"), int(match.group("run"))
    attempt = int(match.group("attempt")) if match.group("attempt") else None
    try:
        github = github_client(get_settings())
    except GitHubNotConfigured as exc:
        fail(f"{exc} to read {url}; or download the run's log archive and pass the file")
    jobs = github.list_run_jobs(repo, run_id, attempt=attempt)
    with tempfile.TemporaryDirectory(prefix="scrub-ci-log-") as tmp:
        archive = github.download_run_logs(repo, run_id, Path(tmp) / "logs.zip", attempt=attempt)
        return read_log(archive, repo=repo, job_names=[job.get("name", "") for job in jobs])


def print_report(report: LogReport) -> None:
    if not report.failures:
        stderr.print(f"No failing test found in {len(report.jobs)} job(s).")
        return
    table = Table(title=f"{len(report.failures)} failure(s) in {len(report.jobs)} job(s)", show_lines=False)
    for column in ("job", "test", "kind", "error", "signature"):
        table.add_column(column, overflow="fold")
    for f in report.failures:
        first_line = (f.message.splitlines() or [""])[0][:120]
        error = f"{f.exception}: {first_line}" if f.exception else first_line
        table.add_row(f.job, f.test or "-", f.kind, error, short_fingerprint(f.signature))
    stderr.print(table)
    for f in report.failures:
        if f.hint:
            stderr.print(f"[bold]{f.test or f.job}[/bold] ({f.diagnosis}): {f.hint}", markup=True, highlight=False)


def ci_log(
    source: str = typer.Argument(..., metavar="FILE_OR_RUN_URL", help="log archive (zip), text log, or run URL"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object on stdout"),
    repo: str = typer.Option("", "--repo", help="repository the fingerprints are for (owner/name)"),
) -> None:
    """Failing tests, their signatures and diagnosis hints from a run's logs."""
    if source.startswith(("http://", "https://")):
        report = fetch_run_report(source)
    else:
        path = Path(source)
        if not path.is_file():
            fail(f"no such file: {source}")
        report = read_log(path, repo=repo)
    if as_json:
        emit_json(report.to_dict())
    print_report(report)


def register(app: typer.Typer) -> None:
    app.command("ci-log")(ci_log)
