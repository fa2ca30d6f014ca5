"""Shared output helpers: `--json` to stdout, everything human to stderr."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

stderr = Console(stderr=True)


def emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, default=str, sort_keys=False) + "\n")
    sys.stdout.flush()


def fail(message: str, code: int = 2) -> None:
    """Print a clear error to stderr and exit with `code` (2: bad input)."""
    import typer

    stderr.print(f"[red]error:[/red] {message}")
    raise typer.Exit(code)
