"""Run a command over a checkout inside the sandbox.

The sandbox (`app.engine.sandbox.runner`) runs one Python file in a private, empty /tmp. A CI
test needs the whole checkout, so `TreeRunner` binds it read-only at /tmp/work
(`app.engine.sandbox.layer`: entry by entry, links re-created as links, `.git` left out) and
runs `python *argv` there. Nothing is copied or packed, so a checkout of any size runs (a
pytorch/pytorch worktree is tens of thousands of files); the untrusted code cannot touch the
worktree we commit from, because every bind is read-only.

A run's extra files (`run(..., files=...)`: the fuzzed program of
`app.engine.fuzz.treework.ProgramRunner`) go on the layer's scratch part, replacing the
checkout's own file (or link) at that path without writing through it. `binds` place host paths
into the tree on every run: a build's compiled parts (`app.engine.envs.overlay`), so that the
checkout's own Python files run against them, as PyTorch's `tools/nightly.py` arranges it.

The checkout is live: a file written into the worktree (a generated test) is seen by the next
run; there is nothing to repack.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.engine.sandbox.layer import WORK, TreeLayer
from app.engine.sandbox.runner import ProcessResult, Sandbox

__all__ = ["WORK", "TreeRunner", "TreeTooLarge", "pytest_argv"]


class TreeTooLarge(ValueError):
    """Never raised any more (a bound checkout has no size cap); kept until the pipelines that
    still catch it are rebased onto `app/pipelines/kit/`."""


@dataclass
class TreeRunner:
    """Runs commands over a checkout in `sandbox`. `binds`: rel path -> host path placed on top
    of the checkout on every run (read-only)."""

    sandbox: Sandbox
    root: Path
    binds: Mapping[str, str] = field(default_factory=dict)

    def layer(self, files: Mapping[str, str] | None = None) -> TreeLayer:
        encoded = {rel: text.encode() for rel, text in (files or {}).items()}
        return TreeLayer(Path(self.root), files=encoded, binds=dict(self.binds))

    def repack(self) -> None:
        """Nothing to do: the checkout is bound, not packed (kept for callers of the packed era)."""

    def run(self, argv: Sequence[str], timeout_s: float, files: Mapping[str, str] | None = None) -> ProcessResult:
        """`python *argv` with the checkout as the working directory (untrusted). `files`
        (path relative to the checkout -> text) are placed on top of it for this run only."""
        return self.sandbox.run(None, timeout_s=timeout_s, argv=list(argv), layer=self.layer(files))


def pytest_argv(*targets: str, extra: Sequence[str] = ()) -> list[str]:
    """`-m pytest` arguments for running `targets` quietly with no cache writes."""
    return ["-m", "pytest", "-q", "-rfExX", "-p", "no:cacheprovider", *extra, *targets]
