"""Structured logs: JSON lines with run_id, delivery_id and stage on every line; a readable
console format; the webhook route and the run context bind what they know."""

from __future__ import annotations

import io
import json
import logging

import pytest
from structlog.contextvars import bound_contextvars, clear_contextvars

from app import logs
from tests.foundation import client, database, enqueuer, settings  # noqa: F401  (fixtures)


@pytest.fixture
def captured():
    stream = io.StringIO()
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    logs.configure("json", "INFO", stream)
    clear_contextvars()
    yield stream
    clear_contextvars()
    root.handlers[:], root.level = saved


def lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def test_every_line_is_json_with_the_context_keys(captured):
    logging.getLogger("some.library").warning("plain %s line", "stdlib")
    with bound_contextvars(run_id=7, stage="reproduce"):
        logging.getLogger("app.x").info("inside", extra={"detail": 3})
    first, second = lines(captured)
    assert first["event"] == "plain stdlib line" and first["level"] == "warning" and first["logger"] == "some.library"
    assert (first["run_id"], first["delivery_id"], first["stage"]) == (None, None, None) and first["timestamp"].endswith("Z")
    assert (second["run_id"], second["stage"], second["detail"]) == (7, "reproduce", 3)


def test_exceptions_are_in_the_line(captured):
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("x").exception("failed")
    [line] = lines(captured)
    assert "ValueError: boom" in line["exception"]


def test_console_format_is_readable_not_json():
    stream = io.StringIO()
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    try:
        logs.configure("console", "INFO", stream)
        logging.getLogger("x").info("hello there")
    finally:
        root.handlers[:], root.level = saved
    text = stream.getvalue()
    assert "hello there" in text and not text.lstrip().startswith("{")


def test_auto_means_json_unless_a_terminal():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert logs.wants_json("auto", io.StringIO()) and not logs.wants_json("auto", Tty())
    assert logs.wants_json("json", Tty()) and not logs.wants_json("console", io.StringIO())


def test_a_webhook_line_carries_its_delivery_id(captured, client):
    from tests.foundation import deliver

    assert deliver(client, "ping", {"zen": "z", "hook_id": 1}, delivery="delivery-42").status_code == 200
    [line] = [l for l in lines(captured) if l["logger"] == "app.api.webhooks"]
    assert line["delivery_id"] == "delivery-42" and line["gh_event"] == "ping" and line["event"] == "webhook ping: pong"


def test_a_stage_binds_its_name_until_it_finishes(captured, database, settings):
    from tests.web import sample_runs

    run_id = sample_runs.add_run(database)
    ctx = sample_runs.context(database, settings, run_id)
    ctx.stage_started("reproduce")
    logging.getLogger("app.engine.sandbox").info("sandbox started")
    ctx.stage_finished("reproduce", "done", "ok", {})
    logging.getLogger("x").info("after")
    found = {line["event"]: line for line in lines(captured)}
    assert found["sandbox started"]["stage"] == "reproduce"
    assert found["stage reproduce done"]["run_id"] == run_id and found["after"]["stage"] is None
