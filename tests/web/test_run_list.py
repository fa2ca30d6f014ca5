"""The run list page: titles, filters, search, pages, links; bad input explained, not a 500."""

from __future__ import annotations

import re

from app.web.run_list import page_url, parse_filters
from app.db.run_list import RunFilter
from tests.web import sample_runs


def rows(page: str) -> list[str]:
    return re.findall(r'<tr data-run="(\d+)">', page)


def test_titles_links_and_escaping(client, database, settings):
    issue = sample_runs.reproduced_issue_run(database, settings)
    ci = sample_runs.add_run(database, kind="ci_ingest", issue=None, title="nightly", params={"workflow_run_id": 99},
                             target="https://github.com/o/r/actions/runs/99", status="succeeded")
    page = client.get("/").text
    assert rows(page) == [str(ci), str(issue)]
    assert "matmul shape error &lt;script&gt;" in page and "<script>window" not in page
    assert 'href="https://github.com/o/r/actions/runs/99"' in page and 'href="https://github.com/o/r/issues/12"' in page


def test_filters_and_search_from_the_query_string(client, database, settings):
    a = sample_runs.add_run(database, title="Alpha crash", status="failed")
    b = sample_runs.add_run(database, title="Beta crash", status="succeeded", repo="o/b")
    assert rows(client.get("/?q=crash").text) == [str(b), str(a)]
    assert rows(client.get("/?q=alpha").text) == [str(a)]
    assert rows(client.get("/?status=succeeded&repo=o/b").text) == [str(b)]
    empty = client.get("/?status=cancelled").text
    assert rows(empty) == [] and "No run matches" in empty
    assert '<option value="o/b" selected>' in client.get("/?repo=o/b").text


def test_pagination_links_carry_the_filters(client, database, monkeypatch):
    from app.web import run_list

    monkeypatch.setattr(run_list, "PAGE_SIZE", 2)
    made = [sample_runs.add_run(database, title=f"crash {n}", status="failed") for n in range(5)]
    first = client.get("/?q=crash").text
    assert rows(first) == [str(made[4]), str(made[3])]
    older = re.search(r'<a rel="next" href="([^"]+)"', first).group(1).replace("&amp;", "&")
    assert older == f"/?q=crash&before={made[3]}"
    second = client.get(older).text
    assert rows(second) == [str(made[2]), str(made[1])] and 'rel="prev" href="/?q=crash"' in second


def test_a_bad_cursor_is_explained_not_an_error(client, database):
    sample_runs.add_run(database)
    response = client.get("/?before=<script>")
    assert response.status_code == 200 and "must be a run number" in response.text and "<script>" not in response.text


def test_the_list_goes_live_only_while_a_run_is_active(client, database):
    run_id = sample_runs.add_run(database, status="succeeded")
    assert "data-events" not in client.get("/").text
    sample_runs.add_run(database, status="queued")
    assert 'data-events="/events/runs"' in client.get("/").text
    assert "data-events" not in client.get(f"/?before={run_id + 1}").text  # an older page stays put


def test_parse_filters_and_page_url():
    filters, before, problems = parse_filters({"q": "  x  ", "kind": "issue", "before": "42"})
    assert filters == RunFilter(kind="issue", q="x") and before == 42 and problems == []
    assert parse_filters({"before": "-1"})[2] and parse_filters({"before": "-1"})[1] is None
    assert page_url(RunFilter(kind="issue", q="a b"), 7) == "/?kind=issue&q=a+b&before=7" and page_url(RunFilter()) == "/"
