"""A worker holds its run: a duplicate message does not run it twice, the heartbeat keeps the
lease alive through a long stage, and a cancel stops the pipeline before its next stage."""

from __future__ import annotations

import time

from app.db import leases, queries
from app.db.models import Run
from app.pipelines.base import Stage, StageResult
from workers.execute import WorkerServices, execute_run

BOUND_S = 10  # an upper bound for a loop that waits for something to happen, not a timing


def services(database, settings, enqueuer, stages) -> WorkerServices:
    return WorkerServices(settings, database, enqueuer, github_for=lambda i: None, stages_for=lambda kind: stages)


def new_run(database) -> Run:
    with database.session() as session:
        run = queries.create_run(session, kind="selftest", repo="o/r")
        session.commit()
        return run


def load(database, run_id) -> Run:
    with database.session() as session:
        return session.get(Run, run_id)


def test_a_run_held_by_a_live_worker_is_not_run_again(database, settings, enqueuer):
    calls = []
    run = new_run(database)
    assert leases.claim(database, run.id, "other-worker", 60)
    svc = services(database, settings, enqueuer, [Stage("s", lambda ctx, st: calls.append(1) or StageResult())])
    assert execute_run(run.id, svc) == "held by another worker"
    assert calls == [] and load(database, run.id).lease_owner == "other-worker"


def test_the_heartbeat_renews_the_lease_during_a_long_stage(database, settings, enqueuer):
    settings.lease_s = 0.6
    seen = []

    def long_stage(ctx, state):
        first = load(database, ctx.run_id).lease_expires_at
        deadline = time.monotonic() + BOUND_S
        while time.monotonic() < deadline:
            now = load(database, ctx.run_id).lease_expires_at
            if now != first:
                seen.append((first, now))
                break
            time.sleep(0.05)
        return StageResult()

    run = new_run(database)
    assert execute_run(run.id, services(database, settings, enqueuer, [Stage("long", long_stage)])) == "succeeded"
    assert seen and seen[0][1] > seen[0][0]
    stored = load(database, run.id)
    assert stored.status == "succeeded" and stored.lease_owner is None  # released at the end


def test_a_cancel_stops_the_pipeline_before_its_next_stage(database, settings, enqueuer):
    ran = []

    def cancelled_meanwhile(ctx, state):
        ran.append("first")
        with database.session() as session:  # what the Cancel button does meanwhile
            from app.db import commands

            commands.cancel(session, session.get(Run, ctx.run_id), "wanda")
            session.commit()
        return StageResult()

    stages = [Stage("first", cancelled_meanwhile), Stage("second", lambda ctx, st: ran.append("second") or StageResult())]
    run = new_run(database)
    assert execute_run(run.id, services(database, settings, enqueuer, stages)) == "lease lost"
    assert ran == ["first"]
    assert load(database, run.id).status == "cancelled"  # not overwritten by the worker


def test_after_a_transient_error_the_retry_can_claim_the_run(database, settings, enqueuer):
    attempts = []

    def flaky(ctx, state):
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("github unreachable")
        return StageResult()

    run = new_run(database)
    svc = services(database, settings, enqueuer, [Stage("flaky", flaky)])
    try:
        execute_run(run.id, svc)
    except ConnectionError:
        pass
    stored = load(database, run.id)
    assert (stored.status, stored.lease_owner) == ("running", None)  # for the task's retry
    assert execute_run(run.id, svc) == "succeeded" and len(attempts) == 2
