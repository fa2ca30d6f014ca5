"""The status page as a person uses it: a real headless Chromium on a real `scrub serve`
(embedded broker, a Celery worker process), with runs the worker actually ran.

Locally, without chromium, these tests skip; with CI=true they fail (tests/services.py).
Screenshots land in $SCRUB_TEST_SCREENSHOTS when set (else the test's tmp dir).
"""

from __future__ import annotations

import os
import re
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
from tests.browser import Browser, Page, chromium_binary
from tests.services import free_port, unavailable, wait_for_port
from workers.celery_app import create_celery
from workers.enqueue import CeleryEnqueuer

pytestmark = pytest.mark.services
DEADLINE_S = 90  # a bound for a hung worker, not a performance assertion

# Every way untrusted text could try to run in the page; none may.
HOSTILE = '<script>window.__pwned = "script"</script><img src=x onerror="window.__pwned = \'img\'">'
REPORT = f"# Report\n\n{HOSTILE}\n\n```python\nimport torch\ntorch.ones(2) @ torch.ones(3)\n```\n"


@dataclass
class Site:
    url: str
    api: httpx.Client
    database: Database
    settings: Settings
    enqueuer: CeleryEnqueuer
    log: Path

    def start_selftest(self, **params: Any) -> int:
        """A selftest run, queued for the server's own worker."""
        with self.database.session() as session:
            run_id = queries.create_run(session, kind="selftest", repo="o/r", trigger="test", params=params).id
            session.commit()
        self.enqueuer.run_pipeline(run_id)
        return run_id

    def add_run(self, **fields: Any) -> int:
        """A run that only exists in the database: no worker will touch it."""
        with self.database.session() as session:
            run_id = queries.create_run(session, **{"repo": "o/r", **fields}).id
            session.commit()
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


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("site")
    settings = Settings(data_dir=root / "data")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRUB_")}
    env["SCRUB_DATA_DIR"] = str(settings.data_dir)
    port, log = free_port(), root / "serve.log"
    with log.open("wb") as out:
        serve = subprocess.Popen(
            [sys.executable, "-m", "app.cli.main", "serve", "--port", str(port)], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    database = None
    try:
        wait_for_port(port, serve)
        url = f"http://127.0.0.1:{port}"
        database = Database(settings.resolved_database_url)  # `serve` migrated it before listening
        with httpx.Client(base_url=url, timeout=10) as api:
            yield Site(url, api, database, settings, CeleryEnqueuer(create_celery(settings)), log)
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(30)
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.wait()
        if database is not None:
            database.dispose()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    if chromium_binary() is None:
        unavailable("chromium is not installed (apt-get install chromium)")
    browser = Browser.launch(tmp_path_factory.mktemp("chromium") / "profile")
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    page = browser.new_page()
    try:
        yield page
    finally:
        page.close()


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    directory = Path(os.environ.get("SCRUB_TEST_SCREENSHOTS") or tmp_path)
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def rows(page: Page, selector: str, key: str) -> list[dict[str, Any]]:
    """Each row of the table: its `data-<key>`, the cells' visible text, the links, the badge."""
    return page.evaluate(f"""[...document.querySelectorAll({selector!r} + " tbody tr")].map(tr => ({{
        key: tr.dataset.{key},
        cells: [...tr.cells].map(td => td.innerText.trim()),
        links: [...tr.querySelectorAll("a")].map(a => ({{text: a.innerText, href: a.href}})),
        badge: getComputedStyle(tr.querySelector(".badge")).backgroundColor,
    }}))""")


def test_runs_table_lists_every_run_with_its_status_age_and_links(page, site, screenshots):
    finished = site.start_selftest()
    waiting = site.start_selftest(needs_approval=True)
    issue = site.add_run(kind="issue", issue=7, target="https://github.com/o/r/issues/7", status="failed")
    ci = site.add_run(kind="ci_ingest", target="https://github.com/o/r/actions/runs/99",
                      params={"workflow_run_id": 99}, status="succeeded")
    site.wait_for_run(finished)
    site.wait_for_run(waiting, lambda run: run["status"] == "awaiting_approval")

    page.goto(site.url + "/")
    page.screenshot(screenshots / "runs.png")
    table = {row["key"]: row for row in rows(page, "table.runs", "run")}
    header = page.evaluate("[...document.querySelectorAll('table.runs th')].map(th => th.innerText.trim())")
    column = {name: table[str(finished)]["cells"][header.index(name)] for name in ("Repository", "Kind", "Status", "Age", "Took")}
    assert column["Repository"] == "o/r" and column["Kind"] == "selftest" and column["Status"] == "succeeded"
    assert re.fullmatch(r"[\d.<]+[smhd].* ago", column["Age"]) and column["Took"]
    assert table[str(waiting)]["cells"][header.index("Status")] == "awaiting approval"
    assert table[str(waiting)]["cells"][header.index("Took")] == ""  # not finished
    assert {"text": "#7", "href": "https://github.com/o/r/issues/7"} in table[str(issue)]["links"]
    assert {"text": "CI run 99", "href": "https://github.com/o/r/actions/runs/99"} in table[str(ci)]["links"]
    assert {"text": f"#{finished}", "href": f"{site.url}/runs/{finished}"} in table[str(finished)]["links"]
    # One color per meaning (the stylesheet is allowed by the page's CSP and applies).
    colors = {table[str(run)]["badge"] for run in (finished, waiting, issue)}
    assert len(colors) == 3 and "rgba(0, 0, 0, 0)" not in colors

    page.click(f'tr[data-run="{finished}"] a[href="/runs/{finished}"]', navigates=True)
    assert page.evaluate("location.pathname") == f"/runs/{finished}"
    assert page.errors() == []


def test_run_page_shows_the_timeline_the_artifacts_and_the_log_and_runs_no_untrusted_markup(page, site, screenshots):
    run_id = site.start_selftest()
    site.wait_for_run(run_id)
    ctx = site.context(run_id)
    ctx.save_artifact("report.md", "markdown", REPORT)
    ctx.log(f"repro printed {HOSTILE}")

    page.goto(f"{site.url}/runs/{run_id}")
    page.screenshot(screenshots / "run.png")
    stages = rows(page, "table.stages", "stage")
    assert [(row["key"], row["cells"][1]) for row in stages] == [("greet", "done"), ("work", "done"), ("report", "done")]
    assert all(re.fullmatch(r"<?[\d.]+s", row["cells"][4]) for row in stages), stages  # "Took"
    assert page.text("h1 .badge") == "succeeded" and page.evaluate("!document.querySelector('main .live')")
    # The report reads first, the log last; each has a plain-text view.
    names = page.evaluate("[...document.querySelectorAll('section.artifact')].map(s => s.id)")
    assert names == ["artifact-selftest.md", "artifact-report.md", "artifact-log"]
    assert "stage greet: done (hello)" in page.text("#content-log") and HOSTILE in page.text("#content-log")

    # The hostile report is there, as text a person can read, and nothing in it ran.
    assert page.text("#content-report\\.md") == REPORT and page.visible("#content-report\\.md")
    assert page.evaluate("document.querySelectorAll('main script, main img').length") == 0
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.errors() == []

    page.click("#artifact-report\\.md a.raw", navigates=True)
    assert page.evaluate("document.contentType") == "text/plain"
    assert page.evaluate("document.body.innerText") == REPORT
    assert page.evaluate("typeof window.__pwned") == "undefined"


def test_approve_button_lets_the_waiting_run_go_on(page, site, screenshots):
    run_id = site.start_selftest(needs_approval=True)
    site.wait_for_run(run_id, lambda run: run["status"] == "awaiting_approval")

    page.goto(f"{site.url}/runs/{run_id}")
    page.screenshot(screenshots / "awaiting-approval.png")
    assert page.text("form.approve button") == "Approve"
    page.click("form.approve button", navigates=True)

    assert page.evaluate("location.pathname") == f"/runs/{run_id}"  # back on the run's page
    run = site.wait_for_run(run_id, lambda run: run["status"] != "awaiting_approval")
    assert run["params"]["approved_by"] == "status page"
    assert site.wait_for_run(run_id)["status"] == "succeeded"
    # The page follows: the first attempt of `greet` waited, the second ran, and so did the rest.
    page.wait_for("document.querySelector('h1 .badge').innerText === 'succeeded'")
    timeline = [(row["key"], row["cells"][1], row["cells"][2]) for row in rows(page, "table.stages", "stage")]
    assert timeline == [("greet", "waiting", "1"), ("greet", "done", "2"), ("work", "done", "1"), ("report", "done", "1")]
    assert page.evaluate("!document.querySelector('form.approve')")
    assert page.errors() == []


def test_retry_button_runs_a_finished_run_again(page, site):
    run_id = site.start_selftest()
    before = site.wait_for_run(run_id)["stages"][0]["started_at"]

    page.goto(f"{site.url}/runs/{run_id}")
    assert page.evaluate("!document.querySelector('form.approve')")  # nothing waits for approval
    page.click("form.retry button", navigates=True)

    run = site.wait_for_run(run_id, lambda run: run["stages"] and run["stages"][0]["started_at"] != before
                            and run["status"] in FINISHED)
    assert run["status"] == "succeeded" and run["stages"][0]["started_at"] > before  # a second go, same run
    assert page.errors() == []


def test_the_page_of_an_active_run_updates_in_place_until_it_finishes(page, site):
    run_id = site.add_run(kind="selftest", status="running")
    ctx = site.context(run_id)
    ctx.stage_started("greet")

    page.goto(f"{site.url}/runs/{run_id}")
    assert page.text("main .live") and page.text("h1 .badge") == "running"
    assert page.text("tr[data-stage=greet] .duration").endswith("so far")
    page.evaluate("window.__sameDocument = true")

    ctx.stage_finished("greet", "done", "hello", {})
    ctx.set_status("succeeded", verdict="selftest passed")

    page.wait_for("document.querySelector('h1 .badge').innerText === 'succeeded'")
    assert page.evaluate("window.__sameDocument") is True  # updated in place, not reloaded
    assert page.text("tr[data-stage=greet] .badge") == "done"
    assert "stage greet: done (hello)" in page.text("#content-log")
    assert page.evaluate("!document.querySelector('main .live') && !document.querySelector('main[data-refresh]')")
    assert page.errors() == []
