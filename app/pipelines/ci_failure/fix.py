"""The fix stage (seed 002 phase 2, seed 000 step 2): only when `SCRUB_FIX_COMMAND` is set.

The command is the operator's fix agent (trusted, like the worker itself: it may need the
network to reach a model), run with `bash -c` in the job's worktree under the fix phase's
time limit, with the failure in its environment (`SCRUBBOT_TEST`, `SCRUBBOT_FAILURE`,
`SCRUBBOT_PROMPT`, `SCRUBBOT_TEST_FILE`). Its change is kept as a patch in the state (the
publish stage may run on another worker), without the generated test, which stays its own
commit. Verification is not the agent's word: the failing test is rerun in the SANDBOX with
the change, enough times that the old failure rate would have shown up with 95% odds.
"""

from __future__ import annotations

import math
import os
import subprocess

from app.engine.verdict import rerun as reruns
from app.engine.git.repo import git
from app.engine.sandbox.treerun import pytest_argv
from app.pipelines.base import RunContext, StageResult
from app.pipelines.ci_failure.state import CIState, FixAttempt, job_of
from app.pipelines.kit.checkout import ensure_checkout
from app.pipelines.kit.phases import halt, halted, phase_clock
from app.pipelines.kit.sandbox import run_timeout, tree_runner

MAX_VERIFY_RUNS = 30


def verify_runs(failure_rate_low: float) -> int:
    """Passing runs that rule the old failure out with 95% odds (at least 3)."""
    if failure_rate_low >= 1:
        return 3
    if failure_rate_low <= 0:
        return MAX_VERIFY_RUNS
    return max(3, min(MAX_VERIFY_RUNS, math.ceil(math.log(0.05) / math.log(1 - failure_rate_low))))


def fix_stage(ctx: RunContext, state: CIState) -> StageResult:
    command = ctx.settings.fix_command
    if not command:
        return StageResult(summary="no fix command configured (SCRUB_FIX_COMMAND)", skipped=True)
    if skip := halted(state):
        return skip
    job, clock = job_of(state), phase_clock(ctx, state, "fix")
    worktree = ensure_checkout(ctx, job)
    generated = state.generated
    if generated:
        worktree.write_text(generated.path, generated.source)  # never through a link
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "SCRUBBOT_TEST": state.node_id,
        "SCRUBBOT_TEST_FILE": generated.path if generated else "",
        "SCRUBBOT_FAILURE": job.failure_line,
        "SCRUBBOT_PROMPT": job.prompt,
    }
    try:
        done = subprocess.run(["bash", "-c", command], cwd=worktree, env=env, capture_output=True,
                              text=True, timeout=max(clock.remaining_s, 1.0))
    except subprocess.TimeoutExpired:
        return halt("fix command timed out", **clock.exceeded("fix", "the fix command was stopped"),
                    status="Partial", extra=clock.state())
    git("add", "-A", cwd=worktree)
    exclude = [f":(exclude){generated.path}"] if generated else []
    patch = git("diff", "--cached", "--binary", "HEAD", "--", ".", *exclude, cwd=worktree)
    log = (done.stdout + done.stderr)[-3000:]
    if not patch.strip():
        fix = FixAttempt(done.returncode, log, patch, verified=False, summary="the fix command changed nothing")
        return StageResult(summary=fix.summary, output={"fix": fix, **clock.state()})
    low = state.rerun.get("interval", [1.0, 1.0])[0]
    wanted = verify_runs(1.0 if state.verdict == reruns.DETERMINISTIC else low)
    runner = tree_runner(ctx, worktree, build=state.build)
    runner.repack()
    outcomes = []
    for _ in range(wanted):
        if clock.expired:
            break
        result = runner.run(pytest_argv(state.node_id), run_timeout(ctx, clock))
        outcomes.append(reruns.outcome_of(result, exception=job.exception, kind=job.kind))
        if outcomes[-1] != reruns.PASS:
            break
    passed = len(outcomes) == wanted and all(o == reruns.PASS for o in outcomes)
    fix = FixAttempt(done.returncode, log, patch, verified=passed, runs=len(outcomes), wanted_runs=wanted,
                     summary=f"{outcomes.count(reruns.PASS)}/{wanted} verification runs passed")
    return StageResult(summary=fix.summary, output={"fix": fix, **clock.state()})
