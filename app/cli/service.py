"""`scrub serve`, `scrub worker`, `scrub migrate`: the service on this machine."""

from __future__ import annotations

import ctypes
import gc
import os
import signal
import subprocess
import sys
from typing import Annotated

import typer

from app.pipelines.base import DEFAULT_QUEUE, QUEUES
from app.settings import Settings, get_settings

WORKER_STOP_TIMEOUT_S = 20


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.command()(worker)
    app.command()(beat)
    app.command()(migrate)


def migrate() -> None:
    """Create or upgrade the database tables (Alembic upgrade head)."""
    from app.db.migrate import upgrade

    settings = get_settings()
    settings.ensure_data_dir()
    upgrade(settings.resolved_database_url)
    typer.echo(f"database is up to date: {_redacted(settings.resolved_database_url)}", err=True)


def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on (loopback unless OAuth is configured).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    with_worker: Annotated[bool, typer.Option("--worker/--no-worker", help="Also start a Celery worker on all queues.")] = True,
    concurrency: Annotated[int, typer.Option("-c", "--concurrency", help="Processes of that worker.")] = 2,
    insecure_no_login: Annotated[bool, typer.Option(
        "--insecure-no-login", envvar="SCRUB_INSECURE_NO_LOGIN",
        help="Serve a non-loopback --host without OAuth: anyone who reaches it may approve runs.")] = False,
) -> None:
    """Migrate, start a worker process on all queues, and serve the API and status page."""
    import uvicorn

    from app.api import create_app

    from app.cli.preflight import sandbox_problem

    settings = get_settings()
    _configure_logs(settings)  # first: in JSON mode every line after this is a JSON object
    check_exposure(settings, host, insecure_no_login)
    from app.settings import config_files

    read = ", ".join(str(path) for path in config_files()) or "none (environment and defaults only)"
    typer.echo(f"data dir: {settings.data_dir}; config files read: {read}", err=True)
    migrate()
    if not settings.webhook_secret:
        typer.echo("SCRUB_WEBHOOK_SECRET is not set: webhooks will be refused until it is", err=True)
    # The embedded worker runs repros here; with --no-worker this host runs none: nothing to check.
    problem = sandbox_problem(settings) if with_worker else None
    if problem:
        typer.echo(f"error: {problem}. The status page is up, but no worker started: no run can start "
                   "until this is fixed and scrub serve restarted (/healthz says so too)", err=True)
    worker_process = _start_worker(settings, concurrency) if with_worker and not problem else None
    sandbox = None if not with_worker else f"unavailable: {problem}" if problem else "ok"
    api = create_app(settings, sandbox=sandbox, bound_host=host)
    people = api.state.services.people
    if people.local:  # printed once: whoever opens it is the local user (`app.api.access`)
        typer.echo(f"local mode: to sign in, open {sign_in_url(settings, host, port, people.local_token)}", err=True)
    gc.freeze()  # what startup built lives forever: keep it out of the collector's passes
    _exit_cleanly_on_sigterm()
    try:
        # log_config=None: uvicorn's loggers (the access log included) go through app.logs.
        uvicorn.run(api, host=host, port=port, log_level=settings.log_level.lower(), access_log=True, log_config=None)
    finally:
        if worker_process is not None:
            _stop(worker_process)


def check_exposure(settings: Settings, host: str, insecure_no_login: bool) -> None:
    """Local mode (no OAuth) trusts whoever connects: loopback only, unless told otherwise."""
    partial = [name for name, value in (("SCRUB_OAUTH_CLIENT_ID", settings.oauth_client_id),
               ("SCRUB_OAUTH_CLIENT_SECRET", settings.oauth_client_secret),
               ("SCRUB_SESSION_SECRET", settings.session_secret)) if not value]
    if settings.oauth_client_id and partial:
        typer.echo(f"error: GitHub login is half configured: set {', '.join(partial)}", err=True)
        raise typer.Exit(2)
    if settings.oauth_configured:
        typer.echo("GitHub login is on: the status page and the API need a signed-in user or an API token", err=True)
        if not settings.public_url:
            typer.echo("warning: SCRUB_PUBLIC_URL is not set: forms are accepted only from a loopback address "
                       "and the OAuth callback follows the Host header; set it to the URL people use", err=True)
        return
    if not is_loopback(host) and not insecure_no_login:
        typer.echo(
            f"error: refusing to serve {host} without login. Set SCRUB_OAUTH_CLIENT_ID, SCRUB_OAUTH_CLIENT_SECRET "
            "and SCRUB_SESSION_SECRET (see docs/security.md), serve 127.0.0.1 behind a reverse proxy, "
            "or pass --insecure-no-login if this network is trusted",
            err=True,
        )
        raise typer.Exit(2)
    typer.echo("local mode: no GitHub login; to act, or to see runs of private repositories, open the sign-in URL "
               "printed below (set SCRUB_OAUTH_* to require GitHub login)", err=True)


def sign_in_url(settings: Settings, host: str, port: int, token: str) -> str:
    """Local mode's sign-in URL: the public URL when set, else this host and port (loopback
    when it listens on every interface)."""
    from urllib.parse import quote

    if settings.public_url:
        base = settings.public_url.rstrip("/")
    else:
        shown = "127.0.0.1" if host in ("0.0.0.0", "::", "[::]", "") else host
        base = f"http://{f'[{shown}]' if ':' in shown and not shown.startswith('[') else shown}:{port}"
    return f"{base}/login?token={quote(token, safe='')}"


def is_loopback(host: str) -> bool:
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def worker(
    queues: Annotated[str, typer.Option("-Q", "--queues", help="Comma-separated queues to consume.")] = ",".join(QUEUES),
    concurrency: Annotated[int, typer.Option("-c", "--concurrency", help="Worker processes.")] = 2,
    loglevel: Annotated[str, typer.Option("--loglevel")] = "INFO",
) -> None:
    """A Celery worker. `default` is the trusted side (database, GitHub); a worker of the repro
    queues alone (GPU hosts: `scrub worker -Q repro-gpu`) needs only the broker, and refuses
    credentials (docs/security.md, "The trust split")."""
    from workers.celery_app import create_celery, worker_argv

    settings = get_settings()
    names = [q.strip() for q in queues.split(",") if q.strip()]
    unknown = sorted(set(names) - set(QUEUES))
    if unknown or not names:
        raise typer.BadParameter(f"unknown queue(s) {', '.join(unknown) or '(none)'}; queues are {', '.join(QUEUES)}")
    trusted = DEFAULT_QUEUE in names
    if not trusted and (held := held_credentials(settings)):
        typer.echo(f"error: a worker of {', '.join(names)} runs untrusted code and must hold no credential, "
                   f"but it was given {', '.join(held)}: unset them on this host (it needs only "
                   "SCRUB_BROKER_URL; see docs/security.md, \"The trust split\").", err=True)
        raise typer.Exit(2)
    from app.cli.preflight import sandbox_problem

    if problem := sandbox_problem(settings):
        typer.echo(f"error: {problem}. This worker takes no run until it is fixed.", err=True)
        raise typer.Exit(2)
    settings.ensure_data_dir()
    from workers.beats import drain
    from workers.enqueue import CeleryEnqueuer
    from workers.reaper import start_reaper

    json_lines = _configure_logs(settings, loglevel)
    celery = create_celery(settings)
    if trusted:  # resumes runs of dead workers and renews the leases of live repro jobs
        control = create_celery(settings)
        start_reaper(settings, CeleryEnqueuer(control), beats=lambda: drain(control))
        if settings.embedded_broker:  # no beat on the embedded broker: this worker ticks progression itself
            from workers.schedule import start_scheduler

            start_scheduler(settings, CeleryEnqueuer(create_celery(settings)))
    argv = worker_argv(settings, names, concurrency, loglevel)
    celery.worker_main(["--quiet", *argv] if json_lines else argv)  # --quiet: no ASCII-art banner


# What a repro-queue worker must not be given: each is a way to write to GitHub or the database.
CREDENTIALS = {
    "database_url": "SCRUB_DATABASE_URL", "github_token": "SCRUB_GITHUB_TOKEN",
    "github_private_key": "SCRUB_GITHUB_PRIVATE_KEY", "webhook_secret": "SCRUB_WEBHOOK_SECRET",
    "oauth_client_secret": "SCRUB_OAUTH_CLIENT_SECRET", "session_secret": "SCRUB_SESSION_SECRET",
    "api_tokens": "SCRUB_API_TOKENS",
}


def held_credentials(settings: Settings) -> list[str]:
    """The credential settings this process was given (names only)."""
    return [name for field, name in CREDENTIALS.items() if str(getattr(settings, field, "") or "").strip()]


def beat(loglevel: Annotated[str, typer.Option("--loglevel")] = "INFO") -> None:
    """Celery beat: starts progression's re-checks every SCRUB_PROGRESSION_TICK_S (one per deployment,
    on Redis; the embedded default's worker ticks by itself)."""
    from workers.celery_app import create_celery

    settings = get_settings()
    if settings.embedded_broker:
        typer.echo("error: scrub beat needs a real broker (SCRUB_BROKER_URL=redis://...); on the embedded "
                   "default, scrub serve and scrub worker start the progression re-checks themselves", err=True)
        raise typer.Exit(2)
    settings.ensure_data_dir()
    _configure_logs(settings, loglevel)
    schedule_file = settings.data_dir / "celerybeat-schedule"
    create_celery(settings).start(["beat", "--schedule", str(schedule_file), "--loglevel", loglevel])


def _configure_logs(settings: Settings, level: str | None = None) -> bool:
    """Structured logs (app.logs); Celery is told to leave logging as configured here. In JSON
    mode, whatever else reaches stdout or stderr is made JSON too. True in JSON mode."""
    from celery.signals import setup_logging

    from app.logs import configure, json_only_output, wants_json

    json_lines = wants_json(settings.log_format, sys.stderr)
    configure(settings.log_format, level or settings.log_level)
    setup_logging.connect(_keep_logging, weak=False)
    if json_lines:
        json_only_output()
    return json_lines


def _keep_logging(**_: object) -> None:
    """A `setup_logging` receiver: its presence stops Celery from replacing our handlers."""


def _start_worker(settings: Settings, concurrency: int) -> subprocess.Popen:
    env = {**os.environ, "SCRUB_DATA_DIR": str(settings.data_dir.resolve())}
    command = [sys.executable, "-m", "app.cli.main", "worker", "-Q", ",".join(QUEUES), "-c", str(concurrency)]
    # Its own process group: Ctrl-C reaches the worker through `_stop`, once, not twice.
    return subprocess.Popen(command, env=env, start_new_session=True, preexec_fn=_terminate_with_parent)


def _exit_cleanly_on_sigterm() -> None:
    """uvicorn stops on SIGTERM, then re-raises it; by default that kills this process before
    `finally` can stop the worker (`docker stop` sends SIGTERM). Make it an orderly exit."""

    def _exit(signum: int, frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _exit)


def _terminate_with_parent() -> None:
    """In the worker, before exec: SIGTERM it (warm shutdown) if `scrub serve` dies, even by
    SIGKILL, so no orphan keeps consuming the queues (Linux `PR_SET_PDEATHSIG`)."""
    pr_set_pdeathsig = 1
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(pr_set_pdeathsig, signal.SIGTERM)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)  # Celery's warm shutdown: finish the current tasks
    try:
        process.wait(WORKER_STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _redacted(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
