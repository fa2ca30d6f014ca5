"""The run list query: filters, case-insensitive search, keyset pages, the PRs of a page."""

from __future__ import annotations

from app.db import queries, run_list
from app.db.models import StageEvent
from app.db.run_list import RunFilter, title_of


def add(database, **fields) -> int:
    with database.session() as session:
        run = queries.create_run(session, **{"kind": "issue", "repo": "o/r", **fields})
        session.commit()
        return run.id


def ids(page) -> list[int]:
    return [run.id for run in page.runs]


def test_filters_combine_and_search_is_case_insensitive(database):
    a = add(database, title="Matmul shape error", status="succeeded", verdict="reproduces")
    b = add(database, title="CUDA OOM", repo="o/other", status="failed")
    c = add(database, kind="ci_failure", title="test_ops::test_add: AssertionError", status="succeeded")
    with database.session() as session:
        assert ids(run_list.list_runs(session, RunFilter())) == [c, b, a]
        assert ids(run_list.list_runs(session, RunFilter(q="MATMUL"))) == [a]
        assert ids(run_list.list_runs(session, RunFilter(q="o/other"))) == [b]  # repo is searched too
        assert ids(run_list.list_runs(session, RunFilter(q="reproduces"))) == [a]  # and the verdict
        assert ids(run_list.list_runs(session, RunFilter(status="succeeded"))) == [c, a]
        assert ids(run_list.list_runs(session, RunFilter(status="succeeded", kind="issue"))) == [a]
        assert ids(run_list.list_runs(session, RunFilter(repo="o/other", status="succeeded"))) == []
        assert ids(run_list.list_runs(session, RunFilter(verdict="reproduces"))) == [a]


def test_search_wildcards_are_literal(database):
    plain = add(database, title="a_b")
    add(database, title="axb")
    add(database, title="100 percent")
    with database.session() as session:
        assert ids(run_list.list_runs(session, RunFilter(q="a_b"))) == [plain]
        assert ids(run_list.list_runs(session, RunFilter(q="%"))) == []


def test_pages_follow_the_cursor_to_the_end_without_repeats(database):
    made = [add(database, title=f"run {n}") for n in range(7)]
    seen, before = [], None
    with database.session() as session:
        while True:
            page = run_list.list_runs(session, RunFilter(), before=before, limit=3)
            seen += ids(page)
            if page.next_before is None:
                break
            before = page.next_before
    assert seen == sorted(made, reverse=True)


def test_a_page_exactly_full_has_no_next(database):
    for n in range(3):
        add(database, title=f"run {n}")
    with database.session() as session:
        assert run_list.list_runs(session, RunFilter(), limit=3).next_before is None


def test_the_pull_request_of_each_run_on_the_page(database):
    a, b = add(database), add(database)
    with database.session() as session:
        session.add(StageEvent(run_id=a, stage="publish", status="done", output={"pr_url": "https://github.com/o/r/pull/5"}))
        session.add(StageEvent(run_id=b, stage="publish", status="done", output={"pr_url": "javascript:alert(1)"}))
        session.commit()
        assert run_list.list_runs(session, RunFilter()).pull_requests == {a: "https://github.com/o/r/pull/5"}


def test_choices_list_what_exists(database):
    add(database, repo="o/b", status="failed")
    add(database, repo="o/a", kind="ci_ingest", verdict="flaky")
    with database.session() as session:
        found = run_list.choices(session)
    assert found["repo"] == ["o/a", "o/b"] and found["kind"] == ["ci_ingest", "issue"] and found["verdict"] == ["flaky"]


def test_a_repository_is_offered_only_when_its_newest_run_may_be_shown(database):
    add(database, repo="o/public")
    older, newest = add(database, repo="o/secret"), add(database, repo="o/secret")
    asked: list[int] = []

    def shown(run) -> bool:
        asked.append(run.id)
        return run.repo != "o/secret"

    with database.session() as session:
        assert run_list.choices(session, shown)["repo"] == ["o/public"]
    assert newest in asked and older not in asked


def test_title_of_a_payload_or_a_fetch_output():
    assert title_of({"issue": {"title": "  Crash  "}}) == "Crash"
    assert title_of({"workflow_run": {"display_title": "Fix bug", "name": "CI"}}) == "Fix bug"
    assert title_of({"workflow_run": {"name": "nightly"}}) == "nightly"
    assert title_of({"issue": {"title": None}, "workflow_run": "x"}) == ""
    assert len(title_of({"issue": {"title": "x" * 1000}})) == 300
