"""A real `scrub serve` (embedded broker, its own Celery worker process) and a real headless
Chromium driven by Playwright, for the browser tests of the status page.

Playwright is used with Debian's Chromium (`executable_path`): nothing is downloaded. Locally,
without chromium or playwright, the tests skip; with CI=true they fail (tests/services.py).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from app.db import queries
from app.db.context import DbRunContext
from app.db.models import FINISHED, Run
from app.db.session import Database
from app.settings import Settings
from tests.services import free_port, unavailable, wait_for_port
from workers.celery_app import create_celery
from workers.enqueue import CeleryEnqueuer

DEADLINE_S = 90  # a bound for a hung worker, not a performance assertion
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-extensions", "--no-first-run", "--hide-scrollbars"]
VIEWPORT = {"width": 1280, "height": 900}


@dataclass
class Site:
    url: str
    api: httpx.Client
    database: Database
    settings: Settings
    enqueuer: CeleryEnqueuer
    log: Path
    token: str = ""  # local mode's sign-in token (the URL `scrub serve` prints carries it)

    def sign_in(self, page: Any) -> None:
        """Open the sign-in URL in `page`'s browser context, as the operator does at start."""
        page.goto(f"{self.url}/login?token={self.token}")

    def start_selftest(self, **params: Any) -> int:
        """A selftest run, queued for the server's own worker."""
        with self.database.session() as session:
            run_id = queries.create_run(session, kind="selftest", repo="o/r", trigger="test", params=params).id
            session.commit()
        self.enqueuer.run_pipeline(run_id)
        return run_id

    def context(self, run_id: int) -> DbRunContext:
        """What a worker records through, to play a stage by hand."""
        with self.database.session() as session:
            run = session.get(Run, run_id)
        return DbRunContext(self.database, run, self.settings)

    def run_json(self, run_id: int) -> dict[str, Any]:
        return self.api.get(f"/api/v1/runs/{run_id}").raise_for_status().json()

    def wait_for_run(self, run_id: int, done: Any = lambda run: run["status"] in FINISHED) -> dict[str, Any]:
        deadline = time.monotonic() + DEADLINE_S
        while not done(run := self.run_json(run_id)):
            if time.monotonic() > deadline:
                pytest.fail(f"run {run_id} stuck at {run['status']}; server log:\n{self.log.read_text()[-4000:]}")
            time.sleep(0.1)
        return run


def serve(root: Path) -> Iterator[Site]:
    settings = Settings(data_dir=root / "data")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRUB_") or k == "SCRUB_SHARED_DIR"}
    env["SCRUB_DATA_DIR"] = str(settings.data_dir)
    env["SCRUB_LOCAL_TOKEN"] = token = secrets.token_urlsafe(16)
    port, log = free_port(), root / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "app.cli.main", "serve", "--port", str(port)], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    database = None
    try:
        wait_for_port(port, process)
        url = f"http://127.0.0.1:{port}"
        database = Database(settings.resolved_database_url)  # `serve` migrated it before listening
        with httpx.Client(base_url=url, timeout=10, headers={"Authorization": f"Bearer {token}"}) as api:
            yield Site(url, api, database, settings, CeleryEnqueuer(create_celery(settings)), log, token)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if database is not None:
            database.dispose()


def launch_browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright is not installed (pip install playwright; no `playwright install` needed)")
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        unavailable("chromium is not installed (apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=binary, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser: Any, site: Site | None = None) -> Iterator[Any]:
    """A page that records script errors and console errors (`page.errors`), signed in to
    `site` when given."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("console", lambda message: page.errors.append(message.text) if message.type == "error" else None)
    if site is not None:
        site.sign_in(page)
    try:
        yield page
    finally:
        context.close()


def wait_until(page: Any, expression: str, timeout_s: float = 120.0) -> None:
    """Poll `expression` in the page until it is truthy. (Playwright's `wait_for_function`
    evaluates a string with `eval`, which the page's CSP rightly forbids.) While the page
    reloads (an action's redirect, a live update) the element may be missing or the context
    gone: that is "not yet", not a failure. The limit is a hang guard, not a speed check."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if page.evaluate(f"() => {{ try {{ return Boolean({expression}); }} catch (e) {{ return false; }} }}"):
                return
        except Exception as exc:  # noqa: BLE001 - Playwright's navigation errors have no common class
            if "context was destroyed" not in str(exc) and "navigat" not in str(exc):
                raise
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout_s}s: {expression}")
        time.sleep(0.05)
