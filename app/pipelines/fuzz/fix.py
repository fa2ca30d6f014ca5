"""The fuzz job's fix stage (seed 000, steps 2-3), only with `SCRUB_FIX_COMMAND` set.

The command runs in the SANDBOX over a copy of the worktree (the xfail test in place): the
worktree's files are the only thing it can change (`app.engine.fuzz.treework.run_in_copy`),
its environment is the sandbox's plus the variables named in `SCRUB_FIX_ENV` (secret-looking
names refused) and the `SCRUBBOT_*` facts below, and it has the network only with
`SCRUB_FIX_NETWORK=true`. Its change (without the test and the summary file) is kept as a
patch. Then, in the sandbox: the test without its marker must pass on every device; the
related tests (same file, same operations) must pass; and with the fix reverted the test must
fail again with the bug's error. A fix that falls short of any of these is reported, not
published.
"""

from __future__ import annotations

import os

from app.engine.fuzz.summary import SUMMARY_FILE, parse_summary
from app.engine.fuzz.treework import ChangesRefused, apply_changes, run_in_copy
from app.engine.git.repo import git
from app.engine.git.tree import Checkout
from app.engine.sandbox.runner import Sandbox
from app.pipelines.base import RunContext, StageResult
from app.pipelines.kit.checkout import ensure_checkout
from app.pipelines.kit.phases import halt, halted, phase_clock
from app.pipelines.kit.sandbox import editing_sandbox, run_timeout, tree_runner
from app.pipelines.fuzz.state import FuzzState
from app.pipelines.fuzz.verify import check_test, related_tests



def fix_env(settings, state: FuzzState) -> dict[str, str]:
    """What the fix command sees beyond the sandbox's own environment."""
    names = [n.strip() for n in (settings.fix_env or "").split(",") if n.strip()]
    env = {name: os.environ[name] for name in names if name in os.environ}
    generated = state.generated
    env |= {
        "SCRUBBOT_TEST": f"{generated['path']}::{generated['name']}",
        "SCRUBBOT_TEST_FILE": generated["path"],
        "SCRUBBOT_FAILURE": state.error,
        "SCRUBBOT_FUZZ_SEED": "" if state.job.seed is None else str(state.job.seed),
        "SCRUBBOT_DEVICES": ",".join(state.failing_devices),
        "SCRUBBOT_SUMMARY_FILE": SUMMARY_FILE,
    }
    return env


def fix_sandbox(ctx: RunContext, env: dict[str, str], build: dict | None = None) -> tuple[Sandbox, dict[str, str]]:
    """The sandbox a command that edits the checkout runs in, on `build` (the commit's build:
    the fix command's own test runs see the torch the job reproduced with), and its binds; the
    network only where `SCRUB_FIX_NETWORK` allows it."""
    return editing_sandbox(ctx, build, env=env, network=bool(ctx.settings.fix_network))


def _revert(worktree: Checkout, touched: list[str]) -> None:
    for rel in touched:
        tracked = git("ls-files", "--error-unmatch", "--", rel, cwd=worktree, check=False).strip()
        if tracked:
            git("checkout", "HEAD", "--", rel, cwd=worktree)
        elif worktree.is_file(rel):
            worktree.remove(rel)


def fix_stage(ctx: RunContext, state: FuzzState) -> StageResult:
    command = ctx.settings.fix_command
    if not command:
        return StageResult(summary="no fix command configured (SCRUB_FIX_COMMAND): a PR with the test alone",
                           skipped=True)
    if skip := halted(state):
        return skip
    clock = phase_clock(ctx, state, "fix")
    generated = state.generated
    worktree = ensure_checkout(ctx, state.job)
    worktree.write_text(generated["path"], generated["marked"])  # never through a link
    try:
        sandbox, binds = fix_sandbox(ctx, fix_env(ctx.settings, state), state.build)
    except ValueError as exc:  # a SCRUB_FIX_ENV name that looks like a secret
        fix = {"verified": False, "summary": f"the fix command was not run: {exc}"}
        return StageResult(summary=fix["summary"], output={"fix": fix, **clock.state()})
    ran = run_in_copy(sandbox, worktree, command, max(clock.remaining_s, 1.0), binds=binds)
    if ran.timed_out:
        return halt("fix command timed out", **clock.exceeded("fix", "the fix command was stopped"),
                    status="Partial", extra=clock.state())
    summary = parse_summary(ran.changed.get(SUMMARY_FILE, b"").decode("utf-8", "replace"))
    try:
        touched = apply_changes(worktree, ran, keep={generated["path"], SUMMARY_FILE})
    except ChangesRefused as exc:
        touched = []
        ran_log = f"{exc}"
    else:
        ran_log = ""
    git("add", "-A", "--", *touched, cwd=worktree) if touched else None
    patch = git("diff", "--cached", "--binary", "HEAD", "--", *touched, cwd=worktree) if touched else ""
    git("reset", "--quiet", cwd=worktree)
    fix: dict = {"command_exit": ran.exit_code, "log": (ran.output + ran_log)[-3000:], "patch": patch,
                 "files": touched, "summary_text": summary.to_dict(), "questions": summary.render()}
    if not patch.strip():
        fix |= {"verified": False, "summary": "the fix command changed nothing" + (f" ({ran_log})" if ran_log else "")}
        return StageResult(summary=fix["summary"], output={"fix": fix, **clock.state()})
    runner = tree_runner(ctx, worktree, build=state.build)
    timeout = run_timeout(ctx, clock) * 2
    devices = state.device_names()
    passes = check_test(runner, worktree, generated, marked=False, devices=devices, failing=[],
                        exception="", message="", timeout_s=timeout)
    related = related_tests(runner, generated, state.operations, timeout)
    _revert(worktree, touched)
    reverted = check_test(runner, worktree, generated, marked=False, devices=devices, failing=state.failing_devices,
                          exception=state.exception, message=state.message, timeout_s=timeout)
    fix["checks"] = {"passes": passes, "related": related, "fails_when_reverted": reverted}
    problems = []
    if not passes["ok"]:
        problems.append("with the fix the test does not pass (" + "; ".join(passes["problems"]) + ")")
    if not related["ok"]:
        problems.append("the fix breaks related tests: " + (", ".join(related["failed"]) or related["summary"]))
    if not reverted["ok"]:
        problems.append("with the fix reverted the test does not fail again (" + "; ".join(reverted["problems"]) + ")")
    fix["verified"] = not problems
    fix["problems"] = problems
    fix["summary"] = ("verified: the test passes with the fix, fails without it; " + related["summary"]
                      if not problems else "; ".join(problems))
    return StageResult(summary=fix["summary"][:300], output={"fix": fix, **clock.state()})
