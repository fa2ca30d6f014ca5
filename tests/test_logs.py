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


def test_a_request_line_never_carries_the_secrets_of_its_query(captured):
    """uvicorn's access log writes the whole path: local mode's sign-in URL carries its token."""
    access = logging.getLogger("tests.access")  # every line is masked; uvicorn's may be disabled by another test
    access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", "/login?token=s3cr3t-Tok_en&next=/runs/1", "1.1", 303)
    access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", "/auth/callback?code=abc123&state=xyz", "1.1", 303)
    first, second = (line["event"] for line in lines(captured))
    assert "s3cr3t" not in first and "token=***&next=/runs/1" in first
    assert "abc123" not in second and "xyz" not in second and "code=***&state=***" in second


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


STRAY = """
import subprocess, sys, warnings
from app.logs import configure, json_only_output
configure("json", "INFO")
json_only_output()
print("local mode: no login")                                   # a status line of the CLI
print("error: something a person must fix", file=sys.stderr)
warnings.warn("You're running the worker with superuser privileges:\\nabsolutely not recommended!")
print(" -------------- celery@host v5 (banner)", file=sys.__stdout__, flush=True)
subprocess.run([sys.executable, "-c", "print('a child process, plain text')"])
import logging; logging.getLogger("scrub.test").info("a real log line")
"""


def test_in_json_mode_every_line_the_process_and_its_children_write_is_a_json_object(tmp_path):
    """`scrub serve` in JSON mode used to mix plain lines (its own notices, Celery's banner and
    security warning, a child's output) into the JSON stream: 31 of 66 lines."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    done = subprocess.run([sys.executable, "-c", STRAY], cwd=ROOT, capture_output=True, text=True, timeout=60)
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]  # every line, or this raises
    assert all(isinstance(record, dict) for record in records)
    events = {record["event"]: record for record in records}
    assert events["local mode: no login"]["level"] == "info"
    assert events["error: something a person must fix"]["level"] == "error"
    assert any("superuser privileges" in e and "absolutely not recommended" in e for e in events)  # one record
    assert "a child process, plain text" in events and "a real log line" in events
    assert {"timestamp", "logger", "run_id", "delivery_id", "stage"} <= set(events["a child process, plain text"])
