"""A label on an issue with an active run: attach to it (even when the database, not the read,
catches the race), or start it over when its worker died."""

from __future__ import annotations

from datetime import timedelta

from sqlmodel import select

from app.db import leases, queries
from app.db.models import Delivery, Run, StageEvent, utcnow
from tests.foundation import deliver, label_applied, load_payload


def labeled(fixtures) -> dict:
    payload = load_payload(fixtures, "issues/labeled.payload.json")
    payload["label"]["name"] = "scrub"
    return label_applied(payload)


def all_runs(database) -> list[Run]:
    with database.session() as session:
        return list(session.exec(select(Run)))


def test_the_race_lost_at_the_index_attaches_to_the_winner(client, webhook_fixtures, database, enqueuer, monkeypatch):
    first = deliver(client, "issues", labeled(webhook_fixtures)).json()["run_id"]
    # The second delivery reads "no active run" (as if the first had not committed yet) and inserts.
    real = queries.active_issue_run
    calls = []

    def stale_first_read(session, repo, issue):
        calls.append(1)
        return None if len(calls) == 1 else real(session, repo, issue)

    monkeypatch.setattr(queries, "active_issue_run", stale_first_read)
    second = deliver(client, "issues", labeled(webhook_fixtures))
    assert second.status_code == 200 and second.json()["reason"] == f"run {first} is already queued for this issue"
    assert [r.id for r in all_runs(database)] == [first] and enqueuer.runs == [(first, "default")]
    with database.session() as session:
        outcomes = sorted(d.outcome for d in session.exec(select(Delivery)))
    assert outcomes == [f"ignored: run {first} is already queued for this issue", f"issue run {first} queued"]


def test_a_label_on_a_stranded_run_starts_it_over(client, webhook_fixtures, database, enqueuer):
    run_id = deliver(client, "issues", labeled(webhook_fixtures)).json()["run_id"]
    assert leases.claim(database, run_id, "dead-worker", 60)
    with database.session() as session:
        session.add(StageEvent(run_id=run_id, stage="fetch", status="running"))
        run = session.get(Run, run_id)
        run.lease_expires_at = utcnow() - timedelta(seconds=1)
        session.add(run)
        session.commit()
    again = deliver(client, "issues", labeled(webhook_fixtures))
    assert again.status_code == 202 and again.json()["run_id"] == run_id
    with database.session() as session:
        run = session.get(Run, run_id)
        assert (run.status, run.lease_owner) == ("queued", None)
        assert queries.stage_events(session, run_id) == []
    assert enqueuer.runs == [(run_id, "default"), (run_id, "default")] and len(all_runs(database)) == 1


def test_a_label_on_a_live_running_run_is_ignored(client, webhook_fixtures, database, enqueuer):
    run_id = deliver(client, "issues", labeled(webhook_fixtures)).json()["run_id"]
    assert leases.claim(database, run_id, "live-worker", 60)
    again = deliver(client, "issues", labeled(webhook_fixtures))
    assert again.status_code == 200 and "already running" in again.json()["reason"]
    assert enqueuer.runs == [(run_id, "default")]


def test_a_replayed_label_is_a_duplicate_and_only_a_new_application_restarts(client, webhook_fixtures, database,
                                                                            enqueuer):
    # #21: the signed bytes of a label delivery, replayed under a new delivery id, acted as a
    # maintainer labelling again (a stranded run started over, a finished issue ran again).
    payload = labeled(webhook_fixtures)
    run_id = deliver(client, "issues", payload).json()["run_id"]
    assert leases.claim(database, run_id, "dead-worker", 60)
    with database.session() as session:
        run = session.get(Run, run_id)
        run.lease_expires_at = utcnow() - timedelta(seconds=1)
        session.add(run)
        session.commit()
    replay = deliver(client, "issues", payload)  # the same signed payload, a new X-GitHub-Delivery
    assert replay.status_code == 200 and replay.json() == {"status": "duplicate"}
    assert enqueuer.runs == [(run_id, "default")]
    again = deliver(client, "issues", labeled(webhook_fixtures))  # the label applied again: a new updated_at
    assert again.status_code == 202 and again.json()["run_id"] == run_id
    assert enqueuer.runs == [(run_id, "default"), (run_id, "default")]
