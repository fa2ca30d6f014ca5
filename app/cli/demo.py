"""`scrub demo`: the shipped examples, offline, recorded in the configured database.

Runs `examples/issue.json` through the whole issue pipeline and `examples/ci.log` through CI
ingest, as the service would, but with a local stand-in for GitHub (nothing is posted) and
every stage here. The runs land in `SCRUB_DATABASE_URL` (migrated first), so `scrub serve`
shows them on the status page: a first look before creating a GitHub App.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import typer

from app import approvals
from app.cli.offline_github import OfflineGitHub, load_saved, repo_and_number
from app.cli.output import NOT_REPRODUCED, OK, emit_json, fail, stderr
from app.domain import RunStatus

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DEMO_RUN_ID = 1  # the workflow run id the CI example pretends to be
DEMO_JOB = "test (linux, cpu)"


class DemoGitHub(OfflineGitHub):
    """The saved issue, plus one failed workflow run whose only job logged `ci_log`."""

    def __init__(self, issue: dict, comments: list, ci_log: Path) -> None:
        super().__init__(issue, comments)
        self.ci_log = ci_log

    def list_run_jobs(self, repo: str, run_id: int, attempt: int | None = None) -> list[dict]:
        return [{"id": 1, "name": DEMO_JOB, "conclusion": "failure"}]

    def download_run_logs(self, repo: str, run_id: int, dest: Path, attempt: int | None = None,
                          max_bytes: int | None = None) -> Path:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr(f"{DEMO_JOB}/1_Run tests.txt", self.ci_log.read_text(encoding="utf-8"))
        Path(dest).write_bytes(buffer.getvalue())
        return Path(dest)


def _record(database: Any, settings: Any, github: DemoGitHub, **fields: Any) -> dict[str, Any]:
    """Create a run, run every stage of its pipeline here under a lease this process holds,
    and say how it ended. If this process stops midway (Ctrl-C, an error that escapes the
    pipeline) the run ends `failed` with the reason; if it is killed outright, its lease names
    it, and the next `scrub demo` (or a reaper) fails the run (`app.db.leases`)."""
    from sqlalchemy.exc import IntegrityError

    from app.db import leases, queries
    from app.db.context import DbRunContext
    from app.pipelines import base
    from app.pipelines.registry import stages_for
    from workers.lease import Heartbeat

    try:
        with database.session() as session:
            run = queries.create_run(session, trigger="scrub demo", **fields)
            session.commit()
    except IntegrityError:
        fail(f"another run of {fields.get('repo')}#{fields.get('issue')} is active (a scrub demo running now?); "
             "wait for it to finish, or cancel it on the status page")
    owner = leases.local_owner()
    leases.claim(database, run.id, owner, settings.lease_s)
    ctx = DbRunContext(database, run, settings, github_factory=lambda: github)
    try:
        with Heartbeat(database, run.id, owner, settings.lease_s):
            finished = base.run_pipeline(stages_for(run.kind), ctx, any_queue=True)
    except BaseException as exc:  # noqa: BLE001  (recorded, then re-raised)
        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        ctx.set_status(RunStatus.failed, error=f"scrub demo stopped: {reason}")
        leases.release(database, run.id, owner)
        if isinstance(exc, KeyboardInterrupt):
            fail(f"interrupted: run {run.id} is recorded as failed", code=130)
        if isinstance(exc, Exception):  # never a traceback: the reason, and where to look
            fail(f"run {run.id} stopped: {reason} (recorded as failed; see it on the status page)", code=1)
        raise
    leases.release(database, run.id, owner)
    return {"run_id": run.id, "kind": run.kind, "status": finished.status, "verdict": finished.verdict}


FULL_EXAMPLE = "issue-training.json"


def _training_run(database: Any, settings: Any, issue_file: Path) -> dict[str, Any]:
    """`--full`: a report whose 24-line training script is minimized (the diff on the run page)."""
    try:
        issue, comments = load_saved(issue_file)
    except (ValueError, OSError) as exc:
        fail(f"cannot read {issue_file}: {exc}")
    repo, number = repo_and_number(issue)
    stderr.print(f"3/3 issue {repo}#{number}: reproduce, then minimize the training script", markup=False)
    return _record(database, settings, DemoGitHub(issue, comments, issue_file), kind="issue", repo=repo,
                   issue=number, target=str(issue_file),
                   params={"repo": repo, "issue": number, **approvals.trusted_local("scrub demo")})


def demo_command(
    examples: Path = typer.Option(EXAMPLES, "--examples", help="folder with issue.json and ci.log"),
    full: bool = typer.Option(False, "--full", help="also a 24-line training script the pipeline minimizes "
                                                    "(a minute or two more)"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object on stdout"),
) -> None:
    """Run the examples offline and record them on the status page (no GitHub App needed)."""
    from app.db.migrate import upgrade
    from app.db.session import database_for
    from app.settings import get_settings

    issue_file, ci_log = examples / "issue.json", examples / "ci.log"
    for needed in (issue_file, ci_log):
        if not needed.is_file():
            fail(f"{needed} is missing; pass --examples DIR with issue.json and ci.log")
    try:
        issue, comments = load_saved(issue_file)
    except ValueError as exc:
        fail(f"cannot read {issue_file}: {exc}")
    from app.cli.preflight import sandbox_problem

    settings = get_settings()
    if problem := sandbox_problem(settings):
        fail(f"{problem}. The demo runs its repro in the sandbox.")
    settings.ensure_data_dir()
    url = settings.resolved_database_url
    stderr.print(f"database: {url.split('@')[-1]} (migrating)", markup=False, highlight=False)
    upgrade(url)
    database = database_for(url)
    from app.db.leases import fail_abandoned_local_runs

    for run_id in fail_abandoned_local_runs(database):  # a demo killed outright left it running
        stderr.print(f"run {run_id} was left running by a scrub demo that stopped: recorded as failed", markup=False)
    repo, number = repo_and_number(issue)
    github = DemoGitHub(issue, comments, ci_log)
    total = 3 if full else 2
    stderr.print(f"1/{total} issue {repo}#{number}: fetch, triage, review, reproduce in the sandbox, report", markup=False)
    issue_run = _record(database, settings, github, kind="issue", repo=repo, issue=number, target=str(issue_file),
                        params={"repo": repo, "issue": number, **approvals.trusted_local("scrub demo")})
    stderr.print(f"2/{total} CI log {ci_log.name}: failing tests, signatures, diagnoses", markup=False)
    ci_run = _record(database, settings, github, kind="ci_ingest", repo=repo, target=str(ci_log),
                     params={"repo": repo, "workflow_run_id": DEMO_RUN_ID, "run_attempt": 1, "name": "CI",
                             "url": f"https://github.com/{repo}/actions/runs/{DEMO_RUN_ID}",
                             "event": "push", "head_branch": "main", "default_branch": "main",
                             "head_repository": repo})
    runs = [issue_run, ci_run]
    if full:
        runs.append(_training_run(database, settings, examples / FULL_EXAMPLE))
    if as_json:
        emit_json({"runs": runs, "comment": github.comment, "database": url.split("@")[-1]})
    else:
        for run in runs:
            stderr.print(f"run {run['run_id']} ({run['kind']}): {run['status']}, {run['verdict'] or '-'}",
                         markup=False, highlight=False)
        typer.echo(github.comment or "(no comment would be posted)")
        ids = ", ".join(str(run["run_id"]) for run in runs)
        stderr.print(f"see them on the status page: scrub serve, then open the sign-in URL it prints (runs {ids})",
                     markup=False, highlight=False)
    raise typer.Exit(OK if all(run["status"] == RunStatus.succeeded for run in runs) else NOT_REPRODUCED)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_command)
