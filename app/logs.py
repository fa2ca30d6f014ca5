"""Structured logs for the service processes (`scrub serve`, `scrub worker`), with structlog.

Every line carries `run_id`, `delivery_id` and `stage` (null when not known), bound as
contextvars where they become known: the webhook route binds `delivery_id`, a Celery task
binds `run_id`, the DB-backed run context binds `stage` while a stage runs. Lines from the
standard library (uvicorn's access log, Celery, SQLAlchemy) go through the same renderer.

Format: JSON, one object a line (`SCRUB_LOG_FORMAT=json`, or whenever stderr is not a
terminal), or readable colored console lines (`console`, the default in a terminal).

In JSON mode a service's stream holds nothing but JSON objects: `json_only_output` puts a pipe
behind file descriptors 1 and 2, so whatever else is written there (the CLI's own notices,
Celery's banner, a child process's output) is wrapped into an object, one per line; Python
warnings become one record each (`logging.captureWarnings`).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import re
import sys
import threading
from datetime import datetime, timezone
from typing import Any, TextIO

import structlog
from structlog.types import EventDict

CONTEXT_KEYS = ("run_id", "delivery_id", "stage")
_QUIET = {"sqlalchemy.engine": logging.WARNING, "httpx": logging.WARNING, "kombu": logging.WARNING,
          "alembic.runtime.plugins": logging.WARNING}


def _context_keys(logger: Any, method: str, event: EventDict) -> EventDict:
    for key in CONTEXT_KEYS:
        event.setdefault(key, None)
    event.pop("color_message", None)  # uvicorn's duplicate of the message, with ANSI codes
    return event


_URL_SECRET = re.compile(r"([?&](?:token|code|state)=)[^&\s\"']+")


def _url_secrets(logger: Any, method: str, event: EventDict) -> EventDict:
    """Mask secrets a request line carries in its query (local mode's sign-in `?token=`, the
    OAuth callback's `code` and `state`): uvicorn's access log writes the whole path."""
    message = event.get("event")
    if isinstance(message, str) and "=" in message:
        event["event"] = _URL_SECRET.sub(r"\1***", message)
    return event


def wants_json(log_format: str, stream: TextIO) -> bool:
    if log_format in ("json", "console"):
        return log_format == "json"
    return not (hasattr(stream, "isatty") and stream.isatty())


def configure(log_format: str = "auto", level: str = "INFO", stream: TextIO | None = None) -> None:
    """Route structlog and the standard library's logging to one handler on `stream` (stderr)."""
    stream = stream or sys.stderr
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.stdlib.PositionalArgumentsFormatter(),
        structlog.stdlib.ExtraAdder(),
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _context_keys,
        _url_secrets,
    ]
    renderer: Any = (structlog.processors.JSONRenderer() if wants_json(log_format, stream)
                     else structlog.dev.ConsoleRenderer(colors=getattr(stream, "isatty", lambda: False)()))
    structlog.configure(
        processors=[structlog.stdlib.filter_by_level, *shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, structlog.processors.format_exc_info, renderer],
    )
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "celery"):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
    for name, quiet in _QUIET.items():
        logging.getLogger(name).setLevel(quiet)


def _stray_record(line: str) -> str:
    """A plain line as a JSON object with the keys every record has; a JSON object stays as is."""
    stripped = line.strip()
    if stripped.startswith("{"):
        try:
            if isinstance(json.loads(stripped), dict):
                return stripped
        except ValueError:
            pass
    lowered = stripped.lower()
    level = "error" if lowered.startswith("error") else "warning" if lowered.startswith("warning") else "info"
    record = {"event": stripped, "level": level, "logger": "output",
              "timestamp": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"),
              **{key: None for key in CONTEXT_KEYS}}
    return json.dumps(record)


def json_only_output() -> None:
    """From now on, every line written to fds 1 and 2 (by this process or a child) is JSON."""
    sys.stdout.flush()
    sys.stderr.flush()
    real = os.fdopen(os.dup(2), "w", buffering=1, encoding="utf-8", errors="replace")
    read_end, write_end = os.pipe()
    os.dup2(write_end, 1)
    os.dup2(write_end, 2)
    os.close(write_end)
    logging.captureWarnings(True)

    def relay() -> None:
        # Never stops reading while the pipe is open: a writer must not block on a full pipe,
        # even if the real stderr went away (then lines are dropped).
        with os.fdopen(read_end, "r", encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if line.strip():
                    try:
                        real.write(_stray_record(line) + "\n")
                    except (OSError, ValueError):
                        pass

    thread = threading.Thread(target=relay, name="json-output", daemon=True)
    thread.start()

    def drain() -> None:  # at exit: give fds 1 and 2 back, let the relay write what is left
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os.dup2(real.fileno(), 1)
        os.dup2(real.fileno(), 2)
        thread.join(timeout=2)

    atexit.register(drain)
