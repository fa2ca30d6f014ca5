"""Running a fuzzed program on the worker's devices, and the minimize stage's candidates.

- `program_runner`: the program as `repro.py` over the checkout, on the commit's build;
- `run_on_devices`: the program once per device, each failure triaged
  (`app.engine.fuzz.triage`) from its whole output: where it failed (eager, compiled,
  compare), torch bug or generator bug, the failing operators;
- `with_device`: a candidate with the program's device statement back in its place. A
  TorchFuzz program starts `import torch` then `torch.set_default_device(...)`: the statement
  goes after the candidate's leading imports, never in front of them (in front, every
  candidate failed with `NameError: torch` instead of the bug);
- `minimize_budget`: what the minimize stage may spend: the phase's remainder, less what the
  test stage needs (two pytest runs of the program on every device, from the measured times).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from app.engine.fuzz.output import error_of
from app.engine.fuzz.program import on_device
from app.engine.fuzz.treework import PROGRAM_FILE, ProgramRunner
from app.engine.fuzz.triage import triage
from app.engine.minimize.oracle import signature_of
from app.pipelines.base import RunContext
from app.pipelines.fuzz.state import DeviceRun
from app.pipelines.kit.sandbox import tree_runner

PYTEST_OVERHEAD_S = 15.0  # a pytest process importing torch and the test file, per run
MIN_CANDIDATE_TIMEOUT_S = 10.0


def program_runner(ctx: RunContext, worktree: Path, build: dict[str, Any] | None = None) -> ProgramRunner:
    return ProgramRunner.over(tree_runner(ctx, worktree, build=build))


def error_line(output: str, fallback: str = "") -> str:
    """`Class: first message line` of the last traceback, as printed (no digits masked)."""
    exception, message = error_of(output)
    return f"{exception}: {message}".strip(": ") if exception else fallback


def run_on_devices(runner: ProgramRunner, program: str, devices: list[str], timeout_s: float) -> list[DeviceRun]:
    """The program once per device ([""] when it names none); failures triaged."""
    runs = []
    for device in devices:
        source = on_device(program, device) if device else program
        result = runner.run(source, timeout_s)
        signature = signature_of(result, source)
        if signature is None:
            runs.append(DeviceRun(device, False, "", "", round(result.duration_s, 1)))
            continue
        text = result.output.text()
        judged = triage(source, text, PROGRAM_FILE)
        runs.append(DeviceRun(device, True, error_line(text, signature.describe()), result.output.tail_text(3000),
                              round(result.duration_s, 1), judged.to_dict()))
    return runs


def exception_class(error: str) -> str:
    return error.split(":", 1)[0].strip().rsplit(".", 1)[-1]


def with_device(prologue: str, body: str, *, same_lines: bool = False) -> str:
    """`body` with the device statement `prologue` after its leading imports (see the module doc).

    `same_lines`: a one-line statement joins the last import's line (`import torch; torch.set_...`),
    so every line of `body` keeps its number: the minimizer reads a candidate's traceback against
    the candidate it made (the failing line's operations), not against this program."""
    if not prologue:
        return body
    try:
        tree = ast.parse(body)
    except SyntaxError:
        return prologue + body
    lines = body.splitlines(keepends=True)
    cut = 0
    for index, node in enumerate(tree.body):
        is_doc = index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if not (is_doc or isinstance(node, (ast.Import, ast.ImportFrom))):
            break
        cut = node.end_lineno or node.lineno
    if same_lines and cut and prologue.strip() and "\n" not in prologue.strip():
        end = max((n.end_col_offset or 0) for n in tree.body if (n.end_lineno or n.lineno) == cut)
        line = lines[cut - 1]
        lines[cut - 1] = line[:end] + "; " + prologue.strip() + line[end:]
        return "".join(lines)
    return "".join(lines[:cut]) + prologue + "".join(lines[cut:])


def candidate_timeout(runs: list[DeviceRun], ceiling: float) -> float:
    """A candidate's timeout: a few times the slowest measured run (a hung candidate costs that,
    not the whole per-run timeout), within [MIN_CANDIDATE_TIMEOUT_S, ceiling]."""
    slowest = max((run.seconds for run in runs), default=0.0)
    return max(min(ceiling, max(MIN_CANDIDATE_TIMEOUT_S, 4 * slowest)), 0.1)


def reserve_for_test(runs: list[DeviceRun]) -> float:
    """What the test stage needs: the test unmarked and marked, every device in one pytest run
    each, with room for a slower run (x1.5)."""
    return 2 * 1.5 * (sum(run.seconds for run in runs) + PYTEST_OVERHEAD_S)


def minimize_budget(remaining_s: float, runs: list[DeviceRun], asked: float | None = None) -> float:
    """The phase's remainder less the test stage's reserve (and at most `asked`, a run's
    `minimize_budget_s`); 0 when nothing is left."""
    budget = remaining_s - reserve_for_test(runs)
    if asked is not None:
        budget = min(budget, asked)
    return max(0.0, budget)
