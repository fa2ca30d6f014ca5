"""`scrub ci-log FILE_OR_RUN_URL [--json]`: failing tests, signatures and hints from CI logs.

FILE is a run's log archive (the zip GitHub serves) or a plain text log. A run URL
(`https://github.com/o/r/actions/runs/N[/attempts/K]`) or a job URL
(`https://github.com/o/r/actions/runs/N/job/J`, as the browser shows a failed job) is fetched
with the configured credentials, or anonymously when there are none: the run's jobs, then its
log archive into a temporary directory; a job URL keeps that job's failures only.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import typer
from rich.table import Table

from app.cli.output import NOT_REPRODUCED, OK, emit_json, fail, stderr
from app.engine.cilogs.archive import LogReport, UnreadableLog, read_log
from app.engine.cilogs.fingerprint import short_fingerprint

RUN_URL = re.compile(
    r"^https?://[^/]+/(?P<repo>[\w.-]+/[\w.-]+)/actions/runs/(?P<run>\d+)"
    r"(?:/attempts/(?P<attempt>\d+)|/job/(?P<job>\d+))?/?(?:[?#].*)?$"
)


def fetch_run_report(url: str) -> LogReport:
    """Download a run's jobs and log archive (credentials optional) and read them; a job URL
    keeps only that job's failures."""
    from app.cli.github_reads import read

    match = RUN_URL.match(url)
    if not match:
        fail(f"not a workflow run or job URL: {url} (expected https://github.com/OWNER/REPO/actions/runs/ID "
             "or .../actions/runs/ID/job/JOB)")
    repo, run_id = match.group("repo"), int(match.group("run"))
    attempt = int(match.group("attempt")) if match.group("attempt") else None
    job_id = int(match.group("job")) if match.group("job") else None
    with tempfile.TemporaryDirectory(prefix="scrub-ci-log-") as tmp:
        jobs, archive = read(f"the logs of {repo} run {run_id}", lambda github: (
            github.list_run_jobs(repo, run_id, attempt=attempt),
            github.download_run_logs(repo, run_id, Path(tmp) / "logs.zip", attempt=attempt)))
        try:
            report = read_log(archive, repo=repo, job_names=[job.get("name", "") for job in jobs])
        except UnreadableLog as error:
            fail(f"GitHub's log archive of {repo} run {run_id}: {error}")
    if job_id is not None:
        names = [job.get("name", "") for job in jobs if job.get("id") == job_id]
        if not names:
            fail(f"run {run_id} of {repo} has no job {job_id} (its jobs: "
                 f"{', '.join(str(job.get('id')) for job in jobs) or 'none'})")
        report = only_job(report, names[0])
    return report


def only_job(report: LogReport, name: str) -> LogReport:
    """The report restricted to the job called `name`."""
    from dataclasses import replace

    return replace(report, jobs=[job for job in report.jobs if job.name == name],
                   failures=[f for f in report.failures if f.job == name])


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
    """Failing tests, their signatures and diagnosis hints from a run's logs.

    FILE_OR_RUN_URL: a log archive (zip), a text log, a run URL or a job URL. Exit 0 when failing
    tests were found, 1 when none, 2 on bad input."""
    if source.startswith(("http://", "https://")):
        report = fetch_run_report(source)
    else:
        try:
            report = read_log(Path(source), repo=repo)
        except UnreadableLog as error:
            fail(str(error))
    if as_json:
        emit_json(report.to_dict())
    print_report(report)
    raise typer.Exit(OK if report.failures else NOT_REPRODUCED)


def register(app: typer.Typer) -> None:
    app.command("ci-log")(ci_log)
