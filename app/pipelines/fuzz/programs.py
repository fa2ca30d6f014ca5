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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.engine.fuzz.output import error_of
from app.engine.fuzz.program import on_device
from app.engine.fuzz.treework import PROGRAM_FILE, ProgramRunner
from app.engine.fuzz.triage import triage
from app.engine.minimize.oracle import FailureSignature, signature_of
from app.engine.sandbox.capture import CapturedOutput
from app.engine.sandbox.runner import ProcessResult
from app.pipelines.base import RunContext
from app.pipelines.fuzz.state import DeviceRun
from app.pipelines.kit.sandbox import tree_runner

# What a candidate that fails where it must not counts as: a pass (not this bug).
PASSED = ProcessResult(0, None, False, 0.0, CapturedOutput(), "cold")
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
        error = error_line(text) or (mismatch_error(text) if judged.phase == "compare" else signature.describe())
        runs.append(DeviceRun(device, True, error, result.output.tail_text(3000), round(result.duration_s, 1),
                              judged.to_dict()))
    return runs


MISMATCH = "compiled and eager results differ"


def mismatch_error(output: str) -> str:
    """A comparison that ended the program without a traceback (TorchFuzz's numerics check:
    `sys.exit(1)`), named by what it printed: from its last `❌` line (TorchFuzz's), else its
    last three lines; at most four lines."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    marked = [i for i, line in enumerate(lines) if line.startswith("❌")]
    said = lines[marked[-1]:][:4] if marked else lines[-3:]
    return f"{MISMATCH}: {'; '.join(said)}"[:300] if said else MISMATCH


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


def candidate_run(run: Callable[[str, float], Any], prologue: str, expected: FailureSignature,
                  passing: str | None, *, compiled: bool = False) -> Callable[[str, float], Any]:
    """The minimizer's run of a candidate: it fails as the original on the failing device (the
    device statement `prologue` back in place) AND passes where the original passed (else it is
    a different bug: judged as passing).

    `compiled`: the original fails only when compiled (a compiler crash, or compiled and eager
    results that differ): a candidate must also pass with compiling turned off (`compile_off`),
    or it lost the compiled side. Without this, a mismatch that ends the program with `exit 1`
    shrank to `import sys; sys.exit(1)`, which "fails the same" and tests nothing of torch."""

    def judged(source: str, timeout_s: float) -> Any:
        candidate = with_device(prologue, source, same_lines=True)  # its lines where the minimizer reads them
        result = run(candidate, timeout_s)
        if not expected.matches(signature_of(result, candidate)):
            return result
        if passing is not None:
            elsewhere = run(on_device(candidate, passing) if prologue else candidate, timeout_s)
            if signature_of(elsewhere) is not None:
                return PASSED
        if compiled and signature_of(run(compile_off(candidate), timeout_s)) is not None:
            return PASSED
        return result

    return judged


# torch's own switch for "run every torch.compile'd function eagerly" (what Dynamo's hints suggest
# to tell a compiler bug from an eager one); `import torch` first, so it holds after any imports.
COMPILE_OFF = "import torch\ntorch.compiler.set_stance('force_eager')\n"


def compile_off(program: str) -> str:
    """`program` with compiling turned off, after its leading imports: the same program on the
    eager side only. A failure that stays is not the compiler's."""
    return with_device(COMPILE_OFF, program)
