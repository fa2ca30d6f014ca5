"""The repository's linter over the files Scrubbot commits (a fuzz job's test and fix, an
issue's test): `lintrunner -a` or `ruff check --fix`, in the sandbox without the network, over a
copy of the checkout; only the named files take its changes, through the checkout's door. ruff
is the interpreter's own (`python -I`), never a `ruff/` package of the checkout."""

from __future__ import annotations

import shlex

from app.engine.fuzz.treework import apply_changes, run_in_copy
from app.engine.git.tree import Checkout
from app.engine.sandbox.runner import Sandbox
from app.pipelines.base import RunContext
from app.pipelines.kit.sandbox import editing_sandbox

# `python -I`: the installed ruff, never a `ruff/` package of the checkout (the command runs in
# the copy, and a plain `-m` puts the working directory first on sys.path).
LINT_COMMANDS = {"lintrunner": "lintrunner -a", "ruff": "python -I -m ruff check --fix --quiet"}
LINT_TIMEOUT_S = 300.0


def lint_sandbox(ctx: RunContext) -> Sandbox:
    """The sandbox a command that edits the checkout runs in, without the network whatever
    `SCRUB_FIX_NETWORK` says (that is the fix command's alone; a linter, which may run the
    repository's own adapters, needs none)."""
    sandbox, _ = editing_sandbox(ctx)
    return sandbox


def lint_files(ctx: RunContext, worktree: Checkout, linter: str, files: list[str]) -> dict:
    """Run the repository's linter on `files` in the sandbox; keep its fixes to those files."""
    if linter not in LINT_COMMANDS:
        return {"linter": "none", "summary": "no linter configured"}
    command = f"{LINT_COMMANDS[linter]} {' '.join(shlex.quote(f) for f in files)}"
    ran = run_in_copy(lint_sandbox(ctx), worktree, command, LINT_TIMEOUT_S)
    ran_changed = {k: v for k, v in ran.changed.items() if k in files}
    fixed = apply_changes(worktree, type(ran)(ran.exit_code, ran.timed_out, ran.output, ran_changed, ()))
    if ran.exit_code in (126, 127) or "No module named" in ran.output:
        summary = f"{linter} is not available in the sandbox; not linted"
    elif ran.exit_code == 0:
        summary = f"{linter}: clean" + (f", fixed {', '.join(fixed)}" if fixed else "")
    else:
        summary = f"{linter}: problems remain (exit {ran.exit_code})"
    return {"linter": linter, "exit": ran.exit_code, "fixed": fixed, "summary": summary, "output": ran.output[-2000:]}
