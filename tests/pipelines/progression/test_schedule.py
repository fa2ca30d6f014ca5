"""Which tracked bugs are re-checked now, within each repository's budget, and with what."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.domain import TrackedBug
from app.pipelines.progression.schedule import due, params_for

NOW = datetime(2026, 3, 6, 12, 0, tzinfo=UTC)
DAY = 86400.0


def bug(number: int, *, repo: str = "o/r", build: str = "nightly 2026-03-05", checked: float | None = None,
        target: str = "issue", **fields) -> TrackedBug:
    at = NOW - timedelta(hours=checked) if checked is not None else None
    return TrackedBug(repo, number, target, source_run=100 + number, state=fields.pop("state", "reproduces"),
                      build=build, last_check_at=at, last_check_build=build if at else "", **fields)


def picked(bugs, *, build="nightly 2026-03-05", per_day=10, spent=None, found_at=None) -> list[tuple[int, str]]:
    return [(d.bug.number, d.reason) for d in due(bugs, build=build, now=NOW, interval_s=DAY, per_day=per_day,
                                                   spent=spent or {}, found_at=found_at)]


def test_a_new_build_makes_every_open_issue_due_first():
    bugs = [bug(1, checked=1), bug(2, build="2.13.0+cpu"), bug(3, checked=30)]
    assert picked(bugs, build="nightly 2026-03-06") == [
        (2, "new build nightly 2026-03-06"), (3, "new build nightly 2026-03-06"), (1, "new build nightly 2026-03-06")]


def test_on_the_same_build_only_a_check_older_than_the_interval_is_due():
    bugs = [bug(1, checked=1), bug(2, checked=25)]
    assert picked(bugs) == [(2, "periodic: last checked 2026-03-05 11:00 UTC")]


def test_a_bug_never_re_checked_counts_from_when_it_was_found():
    fresh, old = bug(1, target="pull", build=""), bug(2, target="pull", build="")
    found = {101: NOW - timedelta(hours=2), 102: NOW - timedelta(days=3)}
    assert [n for n, _ in picked([fresh, old], found_at=found)] == [2]


def test_closed_fixed_and_busy_bugs_wait():
    bugs = [bug(1, state="fixed", build="x"), bug(2, state="closed", build="x"), bug(3, build="x", active_run=9),
            bug(4, state="passes-now", build="x")]
    assert [n for n, _ in picked(bugs)] == [4]  # passes-now is still open: a witness may come


def test_the_daily_budget_is_per_repository():
    bugs = [bug(n, build="old") for n in range(1, 5)] + [bug(9, repo="O/Other", build="old")]
    assert [n for n, _ in picked(bugs, per_day=3, spent={"o/r": 1})] == [1, 2, 9]
    assert picked(bugs, per_day=3, spent={"o/r": 3, "o/other": 3}) == []


def test_a_pull_is_re_checked_on_its_interval_not_on_torch_builds():
    assert picked([bug(5, target="pull", build="", checked=2)], build="nightly 2026-03-06") == []


def test_an_issue_re_check_carries_the_repro_the_rate_and_both_builds():
    tracked = bug(7, build="2.13.0+cpu", title="conv2d crash")
    source = {"repro": {"source": "import torch\n", "url": "https://github.com/o/r/issues/7", "trusted": True},
              "reported": {"exception": "RuntimeError"}, "expected_exception": None, "needs_cuda": False,
              "reproduction": {"runs": 6, "reproduced": 3, "interval": [0.19, 0.81], "rate": 0.5, "result": {}}}
    new, old = {"label": "nightly 2026-03-05"}, {"label": "2.13.0+cpu", "python": "/p"}
    params = params_for(tracked, source, build=new, last_build=old, reason="new build nightly 2026-03-05")
    assert params["source"] == "import torch\n" and params["trusted"] is True
    assert params["reproduction"] == {"runs": 6, "reproduced": 3, "interval": [0.19, 0.81], "rate": 0.5}
    assert (params["build"], params["last_build"], params["last_state"]) == (new, old, "reproduces")
    assert (params["repo"], params["number"], params["target"], params["source_run"]) == ("o/r", 7, "issue", 107)


def test_a_pull_re_check_carries_the_test_and_where_it_failed():
    source = {"job": {"base": "main", "head_sha": "a" * 40}, "generated": {"path": "test/test_x.py",
              "source": "import unittest\n", "kind": "repro"}, "rerun": {"interval": [0.6, 1.0]}}
    params = params_for(bug(12, target="pull", build=""), source, build={"label": "x"}, last_build=None,
                        reason="periodic")
    assert (params["test_path"], params["failed_at"], params["base"]) == ("test/test_x.py", "a" * 40, "main")
