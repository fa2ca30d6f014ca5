"""Races, settled by the database: many deliveries for one issue at the same moment make one
run and one comment. `scrub serve` and its Celery worker on real Postgres and Redis, the fake
GitHub over HTTP, signed deliveries fired together from 20 threads."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlmodel import select

from app.db.migrate import upgrade
from app.db.models import Delivery, Run
from app.db.session import Database
from tests.reliability.lease_harness import (
    UNTRUSTED_BODY, labeled_payload, post_webhook, scrub_env, start, stop_group, stop_groups, wait_for,
)
from tests.services import free_port, wait_for_port

pytestmark = pytest.mark.services
SECRET = "race-secret"
REPO = "Codertocat/Hello-World"
CONCURRENT = 20


def fire_together(base: str, bodies: list[bytes]) -> list:
    barrier = threading.Barrier(len(bodies))

    def send(body: bytes):
        barrier.wait(timeout=30)
        return post_webhook(base, SECRET, "issues", body)

    with ThreadPoolExecutor(len(bodies)) as pool:
        return list(pool.map(send, bodies))


def test_twenty_concurrent_deliveries_for_one_issue_make_one_run_and_one_comment(
    tmp_path, fake_github, redis_server, postgres_url
):
    upgrade(postgres_url)
    database = Database(postgres_url)
    fake_github.add_collaborator(REPO, "Codertocat", "triage")  # the labeler: the label counts
    fake_github.add_issue(REPO, 1, title="bug", body=UNTRUSTED_BODY, user="stranger")
    port, log = free_port(), tmp_path / "serve.log"
    env = scrub_env(tmp_path / "data", database_url=postgres_url, broker_url=redis_server, webhook_secret=SECRET,
                    github_token="t", github_api_url=fake_github.url)
    serve = start(["serve", "--port", str(port), "-c", "2"], env, log)
    try:
        wait_for_port(port, serve)
        base = f"http://127.0.0.1:{port}"
        answers = fire_together(base, [labeled_payload(REPO, 1, moment=n) for n in range(CONCURRENT)])  # 20 applications
        assert all(a.status_code in (200, 202) for a in answers), [a.text for a in answers]
        started = [a.json()["run_id"] for a in answers if a.json().get("status") == "queued"]
        assert len(started) == 1, [a.json() for a in answers]

        def settled():
            with database.session() as session:
                return session.get(Run, started[0]).status == "awaiting_approval" and fake_github.comments(REPO, 1)

        wait_for("the run to ask for approval", settled, log)
        with database.session() as session:
            runs = list(session.exec(select(Run).where(Run.repo == REPO, Run.issue == 1)))
            outcomes = [d.outcome for d in session.exec(select(Delivery))]
        assert [r.id for r in runs] == started
        assert len(outcomes) == CONCURRENT
        assert outcomes.count(f"issue run {started[0]} queued") == 1
        assert sum(o.startswith(f"ignored: run {started[0]} is already") for o in outcomes) == CONCURRENT - 1
        comments = fake_github.comments(REPO, 1)
        assert len(comments) == 1 and "/scrub approve" in comments[0]["body"]
    finally:
        stop_group(serve)
        database.dispose()


# Each issue is one trial of the delivery race (its two deliveries sit side by side in a
# 16-thread pool, so they are in flight together) and one more task the three workers contend
# for on one queue: with 60, each worker ran ~20 runs (leases sampled while it ran: 20/20/20).
# More issues only repeat the same trials; many deliveries for one issue is the test above.
ISSUES = 60


def test_three_workers_sixty_issues_each_delivered_twice(tmp_path, fake_github, redis_server, postgres_url):
    """One API, three `scrub worker` processes, one Redis, one Postgres: every issue gets one
    run and one comment, though each label arrives twice at once (two deliveries)."""
    upgrade(postgres_url)
    database = Database(postgres_url)
    fake_github.add_collaborator(REPO, "Codertocat", "triage")
    for number in range(1, ISSUES + 1):
        fake_github.add_issue(REPO, number, title=f"bug {number}", body=UNTRUSTED_BODY, user="stranger")
    port, log = free_port(), tmp_path / "services.log"
    env = scrub_env(tmp_path / "data", database_url=postgres_url, broker_url=redis_server, webhook_secret=SECRET,
                    github_token="t", github_api_url=fake_github.url)
    processes = [start(["serve", "--port", str(port), "--no-worker"], env, log)]
    try:
        wait_for_port(port, processes[0])
        processes += [start(["worker", "-c", "1"], env, log) for _ in range(3)]
        base = f"http://127.0.0.1:{port}"
        bodies = [labeled_payload(REPO, n, moment=k) for n in range(1, ISSUES + 1) for k in range(2)]
        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(lambda body: post_webhook(base, SECRET, "issues", body), bodies))
        assert all(a.status_code in (200, 202) for a in answers), [a.text for a in answers if a.status_code >= 300][:3]

        def all_waiting():
            with database.session() as session:
                statuses = [r.status for r in session.exec(select(Run).where(Run.repo == REPO))]
            return len(statuses) == ISSUES and all(s == "awaiting_approval" for s in statuses)

        wait_for("every run to ask for approval", all_waiting, log, bound_s=600)
        with database.session() as session:
            issues = [r.issue for r in session.exec(select(Run).where(Run.repo == REPO))]
        assert sorted(issues) == list(range(1, ISSUES + 1))  # one run per issue, none twice
        wait_for("every comment", lambda: all(fake_github.comments(REPO, n) for n in range(1, ISSUES + 1)), log)
        counts = {n: len(fake_github.comments(REPO, n)) for n in range(1, ISSUES + 1)}
        assert set(counts.values()) == {1}, {n: c for n, c in counts.items() if c != 1}
        assert len(fake_github.writes_to("POST", "/comments")) == ISSUES
    finally:
        stop_groups(processes)
        database.dispose()
