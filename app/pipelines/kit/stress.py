"""The test stage's two checks: "this test xfails" and "this stress test fails in 20 minutes".

`verify_xfail` runs a generated test in the sandbox and reads pytest's summary counts.
`stress_stage` (flaky verdict) writes the stress test, measures its failures per minute over
a bounded window in the sandbox (`--keep-going`), checks seed 004's budget (at least one
failure in 20 minutes with probability >= 95%, at 95% confidence: see app.engine.testgen.stress),
rewrites the file with the measured rate and tuned defaults, and verifies that it xfails.
"""

from __future__ import annotations

import re
from pathlib import Path

from app.engine.testgen.stress import StressKnobs, check_budget, measure_args, parse_summary, stress_test, tuned_knobs
from app.engine.testgen.repro_test import GeneratedTest
from app.engine.git.tree import write_text
from app.engine.sandbox.treerun import TreeRunner, pytest_argv
from app.pipelines.base import RunContext, StageResult
from app.pipelines.ci.job import CIJob, PhaseClock, halt, run_timeout, tree_runner
from app.pipelines.ci.state import CIState, GeneratedFile, XfailCheck

DEFAULT_WINDOW_S = 60.0  # measurement window; `stress_window_s` in the run's params overrides
_COUNTS = re.compile(r"(\d+) (passed|failed|xfailed|xpassed|skipped|errors?|deselected)\b")


def pytest_counts(output: str) -> dict[str, int]:
    """`{"xfailed": 1, "passed": 2}` from pytest's final summary line."""
    lines = [line for line in output.splitlines() if _COUNTS.search(line)]
    if not lines:
        return {}
    return {kind.rstrip("s") if kind.startswith("error") else kind: int(n) for n, kind in _COUNTS.findall(lines[-1])}


def verify_xfail(runner: TreeRunner, path: str, timeout_s: float) -> XfailCheck:
    """Run `path` in the sandbox: it must end with >= 1 xfailed and no failure, error or XPASS."""
    runner.repack()
    result = runner.run(pytest_argv(path), timeout_s)
    counts = pytest_counts(result.output.text())
    bad = counts.get("failed", 0) + counts.get("error", 0) + counts.get("xpassed", 0)
    ok = result.exit_code == 0 and counts.get("xfailed", 0) >= 1 and not bad
    if result.timed_out:
        summary = f"timed out after {timeout_s:.0f} s"
    else:
        summary = ", ".join(f"{n} {k}" for k, n in counts.items()) or f"exit code {result.exit_code}"
    return XfailCheck(xfailed=ok, summary=summary, counts=counts, exit_code=result.exit_code,
                      timed_out=result.timed_out, output=result.output.tail_text(3000))


def _write(worktree: Path, test: GeneratedTest) -> None:
    write_text(worktree, test.path, test.source)  # never through a link of the checkout


def stress_stage(ctx: RunContext, state: CIState, job: CIJob, worktree: Path, clock: PhaseClock) -> StageResult:
    node = state.node_id
    per_iteration = min(60.0, run_timeout(ctx, clock))
    knobs = StressKnobs(timeout_s=per_iteration)
    reserve = max(5.0, 0.25 * clock.remaining_s)  # kept for the xfail verification
    window = min(float(ctx.params.get("stress_window_s", DEFAULT_WINDOW_S)), clock.remaining_s - reserve)
    if window < 1:
        return halt("no time left to measure", **clock.exceeded("test", "no time left for the stress run"),
                    status="Partial")
    draft = stress_test(node, reason=job.failure_line, knobs=knobs)
    _write(worktree, draft)
    cpu_s = int((window + per_iteration) * (knobs.workers + 1)) + 30
    runner = tree_runner(ctx, worktree, cpu_s=cpu_s)
    runner.repack()
    result = runner.run(measure_args(draft, window_s=window, knobs=knobs), window + per_iteration + 20)
    measurement = parse_summary(result.output.text())
    if measurement is None or measurement.errors:
        detail = result.output.tail_text(2000)
        return halt("stress run failed", "the stress test did not run to its summary", status="Partial",
                    extra={"stress": {"output": detail}})
    check = check_budget(measurement)
    tuned = tuned_knobs(measurement, knobs)
    measured = (
        f"{measurement.failures} failures in {measurement.iterations} iterations over "
        f"{measurement.elapsed_s:.0f} s with {measurement.workers} workers; {check.describe()}."
    )
    final = stress_test(node, reason=job.failure_line, knobs=tuned, measured=measured)
    _write(worktree, final)
    verification = verify_xfail(runner, final.path, max(clock.remaining_s, 1.0))
    output = {
        "generated": GeneratedFile(final.path, final.source, "stress"),
        "stress": {"measurement": measurement.to_dict(), "budget": check.to_dict(),
                   "knobs": tuned.__dict__, "described": measured},
        "verification": verification,
        "test_created": final.path,
    }
    if not verification.xfailed:
        if clock.expired:
            return halt("verification cut by the phase limit", **clock.exceeded("test"), status="Partial", extra=output)
        return halt("stress test did not xfail", "the stress test did not xfail: " + verification.summary,
                    status="Partial", extra=output)
    if not check.passes:
        return StageResult(summary=f"stress test misses the 20-minute target: {check.describe()}", output=output)
    return StageResult(summary=f"{final.path}: {measurement.rate_per_minute:.1f} failures/min; xfails", output=output)
