"""`scrub setup --url https://scrub.example.org`: create the GitHub App in one click (its
manifest), store what GitHub returns, and `scrub setup --check` after installing it.

A small server on 127.0.0.1 shows a page whose button posts the manifest to GitHub; GitHub
sends the browser back to it with a code, which is traded for the App's id, private key,
webhook secret and OAuth credentials (`app.github.manifest`). They are written to the config
file (`SCRUB_CONFIG`, else `~/.config/scrubbot/scrub.env`), the key beside it, mode 0600.
"""

from __future__ import annotations

import html
import json
import os
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import typer

from app.cli.output import INPUT_ERROR, fail, stderr

WAIT_S = 15 * 60


def default_config_file() -> Path:
    chosen = os.environ.get("SCRUB_CONFIG", "").strip()
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "scrubbot" / "scrub.env"


def _page(title: str, body: str) -> bytes:
    return (f"<!doctype html><meta charset=utf-8><title>{html.escape(title)}</title>"
            f"<body style='font:15px system-ui;max-width:40rem;margin:3rem auto'><h1>{html.escape(title)}</h1>"
            f"{body}</body>").encode()


class _Flow:
    """The state of one setup: the manifest to post, and what came back."""

    def __init__(self, manifest: dict, action: str, state: str, api_url: str, public_url: str, config: Path):
        self.manifest, self.action, self.state = manifest, action, state
        self.api_url, self.public_url, self.config = api_url, public_url, config
        self.done = threading.Event()
        self.result: str | None = None  # the install URL, once stored
        self.error: str | None = None

    def handler(self) -> type[BaseHTTPRequestHandler]:
        flow = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet: the CLI says what happens
                return

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; "
                                                            "form-action https: http:")
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802  (http.server's name)
                url = urlsplit(self.path)
                if url.path == "/":
                    self._send(200, _page("Create the Scrubbot GitHub App", (
                        f"<p>GitHub will show the App it is about to create (webhook <code>"
                        f"{html.escape(flow.manifest['hook_attributes']['url'])}</code>, its permissions and events) "
                        "and ask you to confirm.</p>"
                        f"<form method=post action=\"{html.escape(flow.action)}\">"
                        f"<input type=hidden name=manifest value=\"{html.escape(json.dumps(flow.manifest))}\">"
                        "<button>Create the App on GitHub</button></form>")))
                elif url.path == "/callback":
                    self._callback(parse_qs(url.query))
                else:
                    self._send(404, _page("Not found", ""))

            def _callback(self, query: dict[str, list[str]]) -> None:
                from app.github.manifest import convert, save

                code, state = query.get("code", [""])[0], query.get("state", [""])[0]
                if not code or not secrets.compare_digest(state, flow.state):
                    self._send(400, _page("Not this setup", "<p>The state does not match: start again.</p>"))
                    return
                try:
                    creds = convert(flow.api_url, code)
                    save(creds, flow.public_url, flow.config)
                except (ValueError, OSError, KeyError) as exc:
                    flow.error = str(exc)
                    self._send(502, _page("Setup failed", f"<p>{html.escape(str(exc))}</p>"))
                else:
                    flow.result = f"{creds.html_url.rstrip('/')}/installations/new"
                    self._send(200, _page("Created", (
                        f"<p>Stored in <code>{html.escape(str(flow.config))}</code>. Now install it on your "
                        f"repositories: <a href=\"{html.escape(flow.result)}\">{html.escape(flow.result)}</a>, "
                        "then run <code>scrub setup --check</code>.</p>")))
                flow.done.set()

        return Handler


def setup_command(
    url: str = typer.Option("", "--url", help="where GitHub reaches this Scrubbot (its public https URL)"),
    org: str = typer.Option("", "--org", help="create the App in this organization (default: your account)"),
    name: str = typer.Option("Scrubbot", "--name", help="the App's name on GitHub (must be unique there)"),
    port: int = typer.Option(8765, "--port", help="port of the local page that talks to GitHub"),
    check: bool = typer.Option(False, "--check", help="after installing: list installations and deliveries"),
) -> None:
    """Create the GitHub App from a manifest (one click), or check it after installing it."""
    from app.settings import get_settings

    settings = get_settings()
    if check:
        raise typer.Exit(post_install_check(settings))
    if not url.startswith("https://") and not url.startswith("http://"):
        fail("--url is required: the public URL GitHub sends webhooks to (https://scrub.example.org)")
    from app.github.manifest import build_manifest, new_app_url

    state = secrets.token_urlsafe(16)
    local = f"http://127.0.0.1:{port}"
    manifest = build_manifest(url, f"{local}/callback", name)
    flow = _Flow(manifest, new_app_url(settings.resolved_github_web_url, state, org or None), state,
                 settings.github_api_url, url, default_config_file())
    try:
        server = ThreadingHTTPServer(("127.0.0.1", port), flow.handler())
    except OSError as exc:
        fail(f"cannot listen on 127.0.0.1:{port} ({exc.strerror}); pass --port")
    threading.Thread(target=server.serve_forever, name="setup", daemon=True).start()
    stderr.print(f"open {local}/ in a browser on this machine and click the button; waiting...", markup=False)
    try:
        finished = flow.done.wait(WAIT_S)
    finally:
        server.shutdown()
    if not finished:
        fail(f"no answer from GitHub in {WAIT_S // 60} minutes; run scrub setup again")
    if flow.error or not flow.result:
        fail(f"GitHub did not create the App: {flow.error}")
    stderr.print(f"stored the App's id, key, webhook secret and login credentials in {flow.config}", markup=False)
    typer.echo(f"install it on your repositories: {flow.result}\nthen: scrub setup --check")


def post_install_check(settings: object) -> int:
    """With the App's credentials: who it is, where it is installed, and its latest deliveries."""
    from githubkit import AppAuthStrategy, GitHub

    from app.github.auth import read_private_key

    if not (getattr(settings, "github_app_id") and getattr(settings, "github_private_key")):
        stderr.print("error: no GitHub App configured: run scrub setup --url https://<your host> first", markup=False)
        return INPUT_ERROR
    github = GitHub(AppAuthStrategy(settings.github_app_id, read_private_key(settings.github_private_key)),  # type: ignore[attr-defined]
                    base_url=settings.github_api_url)  # type: ignore[attr-defined]
    try:
        app = github.rest.apps.get_authenticated().json()
        installations = github.rest.apps.list_installations().json()
        deliveries = github.rest.apps.list_webhook_deliveries(per_page=5).json()
    except Exception as exc:  # a refused key, an unreachable GitHub: one sentence, no traceback
        stderr.print(f"error: GitHub refused the App's credentials: {exc}", markup=False)
        return INPUT_ERROR
    typer.echo(f"App {app.get('name')} (id {app.get('id')}): installed on {len(installations)} account(s): "
               + ", ".join(str((i.get('account') or {}).get('login')) for i in installations))
    if not installations:
        typer.echo(f"not installed yet: {app.get('html_url', '').rstrip('/')}/installations/new")
        return 1
    if not deliveries:
        typer.echo("no delivery yet: label an issue `scrub` in an installed repository, then run this again")
        return 1
    for delivery in deliveries:
        typer.echo(f"delivery {delivery.get('guid')}: {delivery.get('event')}.{delivery.get('action') or ''} "
                   f"answered {delivery.get('status_code')} ({delivery.get('status')})")
    return 0


def register(app: typer.Typer) -> None:
    app.command("setup")(setup_command)
