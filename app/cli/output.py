"""Shared output helpers: `--json` to stdout, everything human to stderr; exit codes; inputs.

Exit codes of every command:

- 0 (`OK`): it ran and reproduced, or came out as expected (`--expect` matched);
- 1 (`NOT_REPRODUCED`): it ran and did not (passed, a different error, no change found);
- 2 (`INPUT_ERROR`): a usage or input error (no such file, does not compile, bad JSON, a
  GitHub answer that refused the read); nothing ran.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

from rich.console import Console

OK, NOT_REPRODUCED, INPUT_ERROR = 0, 1, 2

stderr = Console(stderr=True)


def emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, default=str, sort_keys=False) + "\n")
    sys.stdout.flush()


def fail(message: str, code: int = INPUT_ERROR) -> NoReturn:
    """Print a clear error to stderr and exit with `code` (2: bad input)."""
    import typer

    stderr.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def read_repro(path: Path) -> str:
    """The text of a repro script, or a clear input error (exit 2): missing, a directory,
    unreadable, or not Python that compiles. Compiling only parses: nothing runs on the host."""
    if path.is_dir():
        scripts = sorted(p.name for p in path.glob("*.py"))
        hint = f" (it holds {', '.join(scripts[:5])})" if scripts else ""
        fail(f"{path} is a directory; pass the repro script itself{hint}")
    if not path.is_file():
        fail(f"no such file: {path}")
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read {path}: {exc}")
    try:
        compile(source, str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f"line {exc.lineno}" if exc.lineno else "somewhere"
        fail(f"{path} does not compile ({where}: {exc.msg}); a repro must be valid Python")
    except ValueError as exc:  # e.g. null bytes
        fail(f"{path} does not compile: {exc}")
    return source


def announce_written(path: Path, lines: int | None = None, note: str = "") -> None:
    """Say on stderr that a file was written: `wrote repro.min.py (12 lines); <note>`."""
    size = f" ({lines} line{'s' if lines != 1 else ''})" if lines is not None else ""
    stderr.print(f"wrote {path}{size}" + (f"; {note}" if note else ""), markup=False, highlight=False)
