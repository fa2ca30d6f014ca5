"""Rich progress bars on stderr, shown only when stderr is a terminal.

Piped or captured output (CI logs, `--json` consumers, tests) gets no bar and no per-step
lines: the summary at the end says everything.
"""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator

from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from app.cli.output import stderr


def interactive() -> bool:
    return stderr.is_terminal


@contextlib.contextmanager
def counted(description: str, total: int | None, *, enabled: bool = True) -> Iterator[Callable[..., None]]:
    """A bar of `total` steps (a spinner when None); yields `advance(steps=1, description=None)`."""
    if not (enabled and interactive()):
        yield lambda steps=1, description=None: None
        return
    columns = [SpinnerColumn(), TextColumn("{task.description}")]
    if total is not None:
        columns += [BarColumn(), MofNCompleteColumn()]
    with Progress(*columns, TimeElapsedColumn(), console=stderr, transient=True) as bar:
        task = bar.add_task(description, total=total)

        def advance(steps: int = 1, description: str | None = None) -> None:
            bar.update(task, advance=steps, **({"description": description} if description else {}))

        yield advance
