"""The test stage (seed 000, step 1): the failing program as a unit test, verified twice.

The file is the one that covers the operation (`app.engine.fuzz.placement`); the test is
device-generic in the repository's style (`app.engine.testgen.device_test`), expected to fail
only on the devices that fail. In the sandbox it must first FAIL with the bug's error on those
devices (and pass on the others) without the marker, then XFAIL with the marker; otherwise the
run stops here, Partial, with the output that shows why.
"""

from __future__ import annotations

from app.engine.fuzz.config import FuzzConfig
from app.engine.fuzz.placement import choose_test_file
from app.engine.git.tree import UnsafePath
from app.engine.testgen.device_test import FuzzTestSpec, fuzz_test
from app.pipelines.base import RunContext, StageResult
from app.pipelines.kit.checkout import ensure_checkout
from app.pipelines.kit.phases import halt, halted, phase_clock
from app.pipelines.kit.sandbox import run_timeout, tree_runner
from app.pipelines.fuzz.state import FuzzState
from app.pipelines.fuzz.verify import check_test


def comment_lines(state: FuzzState, config: FuzzConfig) -> tuple[str, ...]:
    """The comment above the test: what found it, where it fails and with what (as printed)."""
    job = state.job
    lines = [f"Found by {job.label}; reproduced by Scrubbot."]
    if job.seed is not None:
        lines.append("Fuzzer: " + config.command.replace("{seed}", str(job.seed)))
    if state.device_names():
        where = {"eager": " in eager mode", "compiled": " when compiled", "compare": " (compiled differs from eager)"}
        lines.append(f"Devices: {', '.join(state.device_names())}; fails on {', '.join(state.failing_devices)}"
                     f"{where.get(state.failed_in, '')}.")
    if state.tolerances:
        lines.append("Tolerances: " + ", ".join(f"{k}={v:g}" for k, v in sorted(state.tolerances.items())))
    lines.append(f"Error: {state.error}"[:200])
    return tuple(lines)


def compiler_bug(state: FuzzState) -> bool:
    """Whether the test belongs with the compiler's tests: the failure is in the compiled program
    (an eager failure of a program that also compiles is an eager bug)."""
    if state.triage:
        return state.failed_in in ("compiled", "compare")
    return "compile(" in state.program


def test_stage(ctx: RunContext, state: FuzzState) -> StageResult:
    if skip := halted(state):
        return skip
    clock = phase_clock(ctx, state, "reproduce")
    config = FuzzConfig.from_dict(state.config)
    worktree = ensure_checkout(ctx, state.job)
    placement = choose_test_file(worktree, tuple(state.operations), compiles=compiler_bug(state),
                                 style=config.style, configured=config.test_file)
    if worktree.exists(placement.path) and not worktree.is_file(placement.path):
        return halt("test file is a link", f"{placement.path} is a link or not a file; not writing through it",
                    status="Partial")
    try:
        existing = worktree.read_text(placement.path) if placement.exists else None
    except UnsafePath as exc:
        return halt("test file is a link", f"{placement.path}: {exc}; not writing through it", status="Partial")
    spec = FuzzTestSpec(state.job.test_name, state.program, config.style, tuple(state.device_names()),
                    tuple(state.failing_devices), comment_lines(state, config), f"{state.job.label}: {state.error}")
    try:
        test = fuzz_test(spec, placement.path, existing, f"Fuzz repros found by Scrubbot ({state.job.repo}).")
    except SyntaxError as exc:
        return halt("cannot add the test", f"{placement.path} cannot take the test: {exc}", status="Partial")
    generated = {"path": placement.path, "name": test.name, "marked": test.marked, "unmarked": test.unmarked,
                 "style": test.style, "new_file": existing is None, "placement": placement.reason,
                 "rewrote_assertion": test.rewrote_assertion}
    runner = tree_runner(ctx, worktree, build=state.build)
    timeout = run_timeout(ctx, clock) * 2
    check = dict(devices=state.device_names(), failing=state.failing_devices, exception=state.exception,
                 message=state.message, timeout_s=timeout)
    try:
        unmarked = check_test(runner, worktree, generated, marked=False, **check)
    except UnsafePath as exc:  # a link on the way to the file: the worker writes nothing there
        return halt("test file is a link", f"{placement.path}: {exc}; not writing through it", status="Partial")
    output = {"generated": generated, "verification": {"unmarked": unmarked}, "test_created": placement.path}
    if not unmarked["ok"]:
        return halt("the test does not fail as the program does", "without the marker, the test should fail "
                    "with the bug's error: " + "; ".join(unmarked["problems"]), status="Partial", extra=output)
    marked = check_test(runner, worktree, generated, marked=True, **check)
    output["verification"]["marked"] = marked
    if not marked["ok"]:
        return halt("the marked test does not xfail", "with the marker, the test should xfail where it fails "
                    "and pass elsewhere: " + "; ".join(marked["problems"]), status="Partial", extra=output)
    return StageResult(summary=f"{placement.path}::{test.name}: fails without the marker, xfails with it",
                       output=output)
