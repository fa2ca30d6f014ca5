"""The event streams: an update when the run changes, `finished` at the end; list changes."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from fastapi import Request

from app.web import sse
from tests.web import sample_runs


def fake_request() -> Request:
    scope = {"type": "http", "method": "GET", "path": "/", "headers": [], "query_string": b"", "app": None}

    async def receive():
        await asyncio.sleep(3600)  # never disconnects

    return Request(scope, receive)


async def take(stream, n: int, timeout: float = 20.0) -> list[dict]:
    events = []
    async with asyncio.timeout(timeout):
        async for event in stream:
            events.append(event)
            if len(events) == n:
                break
    return events


def test_the_run_stream_sends_the_timeline_on_each_change_then_finished(database, settings, monkeypatch):
    monkeypatch.setattr(sse, "POLL_S", 0.01)
    monkeypatch.setattr(sse, "RUNNING_TICK_S", 3600)  # only real changes in this test
    run_id = sample_runs.add_run(database, kind="selftest", status="running", issue=None)
    ctx = sample_runs.context(database, settings, run_id)
    ctx.stage_started("work")
    services = SimpleNamespace(database=database)

    async def scenario() -> list[dict]:
        stream = sse.run_stream(fake_request(), services, run_id)
        events = await take(stream, 1)
        await asyncio.to_thread(ctx.log, "repro line <b>")
        events += await take(stream, 1)
        await asyncio.to_thread(ctx.stage_finished, "work", "done", "ok", {})
        await asyncio.to_thread(ctx.set_status, "succeeded")
        events += await take(stream, 2)
        rest = [event async for event in stream]
        return events + rest

    events = asyncio.run(scenario())
    assert [e["event"] for e in events] == ["update", "update", "update", "finished"]
    assert 'data-stage="work" data-status="running"' in events[0]["data"] and "so far" in events[0]["data"]
    assert "repro line &lt;b&gt;" in events[1]["data"]  # the log, streamed, escaped
    assert 'data-stage="work" data-status="done"' in events[2]["data"] and 'badge succeeded' in events[2]["data"]


def test_a_running_stage_ticks_even_without_changes(database, settings, monkeypatch):
    monkeypatch.setattr(sse, "POLL_S", 0.01)
    monkeypatch.setattr(sse, "RUNNING_TICK_S", 0.0)
    run_id = sample_runs.add_run(database, kind="selftest", status="running", issue=None)
    sample_runs.context(database, settings, run_id).stage_started("work")
    events = asyncio.run(take(sse.run_stream(fake_request(), SimpleNamespace(database=database), run_id), 3))
    assert [e["event"] for e in events] == ["update"] * 3


def test_the_list_stream_says_changed_when_a_run_appears(database, monkeypatch):
    monkeypatch.setattr(sse, "POLL_S", 0.01)

    async def scenario() -> list[dict]:
        stream = sse.runs_stream(fake_request(), SimpleNamespace(database=database))
        waiting = asyncio.ensure_future(take(stream, 1))
        await asyncio.sleep(0.1)
        assert not waiting.done()  # nothing changed yet
        await asyncio.to_thread(sample_runs.add_run, database)
        return await waiting

    assert asyncio.run(scenario()) == [{"event": "changed", "data": "changed"}]


def test_the_list_stream_of_a_viewer_who_may_not_read_a_private_repository_never_shows_its_activity(
        database, monkeypatch):
    """Anonymous (public repositories readable): runs of `o/secret` come and go unseen; a run of a
    public repository is announced."""
    from app.api.access import ANONYMOUS
    from app.db import queries

    monkeypatch.setattr(sse, "POLL_S", 0.01)
    people = SimpleNamespace(can_read_or_not=lambda viewer, run: run.repo != "o/secret")
    services = SimpleNamespace(database=database, people=people, settings=SimpleNamespace(public_read=True))
    sample_runs.add_run(database, repo="o/public", status="succeeded")

    def private_activity() -> None:
        secret = sample_runs.add_run(database, repo="o/secret", issue=1, status="running")
        with database.session() as session:
            run = session.get(queries.Run, secret)
            run.status = "succeeded"
            session.add(queries.touch(run))
            session.commit()

    polls = []
    version = sse.runs_version
    monkeypatch.setattr(sse, "runs_version", lambda *args: polls.append(1) or version(*args))

    async def polled(more: int) -> None:
        target = len(polls) + more
        while len(polls) < target:
            await asyncio.sleep(0.01)

    async def scenario() -> list[dict]:
        stream = sse.runs_stream(fake_request(), services, ANONYMOUS)
        waiting = asyncio.ensure_future(take(stream, 1))
        await polled(2)
        await asyncio.to_thread(private_activity)
        await polled(3)  # the stream looked again, three times, after the private run's life
        assert not waiting.done()  # and did not announce it
        await asyncio.to_thread(sample_runs.add_run, database, repo="o/public", issue=2)
        return await waiting

    assert asyncio.run(scenario()) == [{"event": "changed", "data": "changed"}]
