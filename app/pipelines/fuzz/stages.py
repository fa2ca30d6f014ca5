"""The fuzz job (seed 000): a fuzz seed or a fuzzed program -> a failing test, a verified fix,
two commits on `scrub/fuzz-<seed>` and a draft PR.

    inputs     the seed or the program, the repository and its commit           [reproduce]
    checkout   the repository at that commit (the CI job's mirror + worktree); .github/scrub.yml
    build      the commit's own build (app.pipelines.kit.build), or needs-build
    fuzz       the repository's own fuzzer with the seed, pinned, in the sandbox -> the program
               it printed (kept: it is the reproduction) + error; a fuzzer that did not run is
               an error, not a clean seed
    reproduce  the program on each device kind this worker has, in the sandbox: which fail,
               with what, where (eager, compiled, compare); a generator bug is reported as one
    minimize   the existing minimizer, keeping the same error and the device (optional stage)
    diagnose   the experiments the error's pattern calls for (app.pipelines.fuzz.diagnosis)
    test       the test in the file that covers the failing operators, device-generic; verified to
               fail with the error without the marker and to xfail with it
    fix        SCRUB_FIX_COMMAND in a sandbox; marker removed -> passes; related tests pass;
               fix reverted -> fails again (app.pipelines.fuzz.fix)                [fix]
    publish    commit 1 the xfail test, commit 2 the fix; linted; pushed; draft PR   [pr]
    report     report.md; the run's status (app.pipelines.fuzz.report)

The checkout, the sandbox, the phase clock and halting are the kit's
(`app.pipelines.kit`); untrusted code (the fuzzer, the program, the tests) runs only in the
sandbox.
"""

from __future__ import annotations

import ast
from pathlib import PurePosixPath

from app.engine.fuzz.config import FuzzConfig, FuzzConfigError, load_fuzz_config
from app.engine.fuzz.output import FuzzerDidNotRun, FuzzOutputError, check_ran, error_of, parse_fuzz_output
from app.engine.fuzz.program import ProgramFacts, needs_device, on_device, operations, split_device
from app.engine.fuzz.treework import PROGRAM_FILE
from app.engine.fuzz.triage import plan_devices, triage
from app.engine.git.repo import GitError, git, head_commit
from app.engine.minimize.oracle import signature_of
from app.engine.minimize.session import NothingToKeep, minimize_repro, original_signature
from app.pipelines.base import CPU_QUEUE, GPU_QUEUE, RunContext, Stage, StageResult
from app.pipelines.kit.build import build_stage as kit_build_stage
from app.pipelines.kit.checkout import ensure_checkout, mirror_cache, remote_for
from app.pipelines.kit.phases import halt, halted, phase_clock
from app.pipelines.kit.sandbox import run_timeout, tree_runner
from app.pipelines.fuzz.diagnosis import diagnose_stage
from app.pipelines.fuzz.fix import fix_stage
from app.pipelines.fuzz.programs import (candidate_run, candidate_timeout, compile_off, exception_class,
                                         minimize_budget, program_runner, run_on_devices, with_device)
from app.pipelines.fuzz.publish import publish_stage, report_stage
from app.pipelines.fuzz.state import FuzzJob, FuzzState
from app.pipelines.fuzz.testing import test_stage

def _seed(value: object) -> int | None:
    text = str(value).strip() if value is not None else ""
    if not text:
        return None
    if not text.lstrip("-").isdigit():
        raise ValueError(f"the fuzz seed must be an integer, not {text[:40]!r}")
    return int(text)


def _head_of(ctx: RunContext, repo: str, ref: str) -> str:
    """The commit of `ref`, or of the default branch (the mirror's HEAD, else main, else master)."""
    mirror = mirror_cache(ctx).sync(repo, remote_for(ctx, repo))
    for name in ([ref] if ref else ["HEAD", "main", "master"]):
        found = git("rev-parse", "--verify", "--quiet", f"{name}^{{commit}}", cwd=mirror, check=False).strip()
        if found:
            return found
    raise GitError(f"no commit for {ref or 'the default branch'}")


def inputs_stage(ctx: RunContext, state: FuzzState) -> StageResult:
    """The run's params (dispatch inputs `fuzz-seed` / `fuzzed-program`, a comment, the CLI)."""
    params = ctx.params
    repo, ref = params.get("repo", ""), params.get("ref") or ""
    program = params.get("fuzzed-program") or params.get("program") or ""
    bare = {"job": FuzzJob(repo=repo, trigger=params.get("trigger", ""))}
    try:
        seed = _seed(params.get("fuzz-seed", params.get("seed")))
    except ValueError as exc:
        return halt("bad seed", str(exc), status="Failed", extra=bare)
    if (seed is None) == (not program.strip()):
        return halt("bad inputs", "give exactly one of a fuzz seed or a fuzzed program", status="Failed", extra=bare)
    if program:
        try:
            ast.parse(program)
        except SyntaxError as exc:
            return halt("bad program", f"the fuzzed program is not valid Python: {exc.msg} (line {exc.lineno})",
                        status="Failed", extra=bare)
    job = FuzzJob(repo=repo, seed=seed, program=program, ref=ref, trigger=params.get("trigger", ""),
                  requested_by=params.get("requested_by", ""), issue=params.get("issue"),
                  base=params.get("base") or ref.removeprefix("refs/heads/") or "main")
    try:
        job.head_sha = params.get("head_sha") or _head_of(ctx, repo, ref)
    except GitError as exc:
        return halt("cannot resolve the ref", f"cannot resolve {ref or 'HEAD'}: {exc}", status="Failed",
                    extra={"job": job})
    return StageResult(summary=f"{job.label} on {repo}@{job.head_sha[:12]}",
                       output={"job": job, "offline": bool(params.get("offline"))})


def checkout_stage(ctx: RunContext, state: FuzzState) -> StageResult:
    if skip := halted(state):
        return skip
    clock = phase_clock(ctx, state, "reproduce")
    try:
        worktree = ensure_checkout(ctx, state.job)
        config = load_fuzz_config(worktree, gpu=bool(ctx.settings.gpu))
    except GitError as exc:
        return halt("checkout failed", f"checkout failed: {exc}", status="Failed", extra=clock.state())
    except FuzzConfigError as exc:
        return halt("bad .github/scrub.yml", str(exc), status="Failed", extra=clock.state())
    return StageResult(summary=f"{state.job.repo}@{head_commit(worktree)[:12]}; {config.style} style, "
                       f"devices {', '.join(config.devices)}, lint {config.lint}",
                       output={"commit": head_commit(worktree), "config": config.to_dict(), **clock.state()})


def build_stage(ctx: RunContext, state: FuzzState) -> StageResult:
    """The torch the fuzzer, the program and the tests run on: the commit's own build
    (app.pipelines.kit.build), or needs-build."""
    if skip := halted(state):
        return skip
    return kit_build_stage(ctx, state.job, next_stage="fuzz")


def fuzz_stage(ctx: RunContext, state: FuzzState) -> StageResult:
    """Run the repository's fuzzer with the seed (in the sandbox, pinned: `FuzzConfig.pinned_argv`);
    its output gives the program, which the job keeps (a seed alone may print another one)."""
    if skip := halted(state):
        return skip
    clock = phase_clock(ctx, state, "reproduce")
    if state.job.seed is None:
        return StageResult(summary="a fuzzed program was given: no fuzzer to run", skipped=True,
                           output={"program": state.job.program, "original_program": state.job.program})
    config = FuzzConfig.from_dict(state.config)
    try:
        argv = config.pinned_argv(state.job.seed)
        runner = tree_runner(ctx, ensure_checkout(ctx, state.job), build=state.build, env=config.pinned_env())
        result = runner.run(argv, run_timeout(ctx, clock))
    except FuzzConfigError as exc:
        return halt("cannot run the fuzzer", str(exc), status="Failed")
    output = result.output.text()
    base = {"fuzz_output": output[-6000:], **clock.state()}
    if result.timed_out:
        return halt("fuzzer timed out", f"the fuzzer did not finish with seed {state.job.seed} in time",
                    status="Failed", extra=base)
    try:
        check_ran(output, result.exit_code, config.script())
        finding = parse_fuzz_output(output)
    except FuzzerDidNotRun as exc:
        return halt("the fuzzer did not run", str(exc), status="Failed", extra=base)
    except FuzzOutputError as exc:
        return halt("no program in the fuzzer's output", str(exc), status="Failed", extra=base)
    if finding is None:
        reason = f"the fuzzer ran seed {state.job.seed} without a failure (exit code {result.exit_code})"
        return halt("no failure", reason, status="Failed", extra=base)
    seen = triage(finding.program, finding.failure_output, PurePosixPath(finding.program_path).name or PROGRAM_FILE)
    summary = f"seed {state.job.seed}: {finding.error_line}"
    fuzz_error = finding.error_line if finding.exception else ""
    if seen.verdict == "device-unavailable":  # TorchFuzz's templates name cuda: not this worker's bug
        summary += f" (the program's device is not on this worker: it runs on {', '.join(config.devices)})"
        fuzz_error = ""
    return StageResult(summary=summary[:300],
                       output={**base, "program": finding.program, "original_program": finding.program,
                               "fuzz_error": fuzz_error, "fuzz_triage": seen.to_dict()})


def reproduce_stage(ctx: RunContext, state: FuzzState) -> StageResult:
    """The program on each of the worker's devices: which fail, with what, and whether that is
    a torch bug (a generator bug, an invalid program, is reported as such, with no test)."""
    if skip := halted(state):
        return skip
    clock = phase_clock(ctx, state, "reproduce")
    facts = ProgramFacts.of(state.program)
    devices, skipped = plan_devices(FuzzConfig.from_dict(state.config).devices, facts.device,
                                    gpu=bool(ctx.settings.gpu))
    base = {"skipped_devices": skipped, "tolerances": facts.tolerances, **clock.state()}
    if not devices:
        return halt("no device here", f"the program runs on {', '.join(skipped)}, which this worker does not have "
                    "(route the run to a repro-gpu worker)", status="Failed", extra=base)
    runner = program_runner(ctx, ensure_checkout(ctx, state.job), state.build)
    runs = run_on_devices(runner, state.program, devices, run_timeout(ctx, clock))
    failing = [r for r in runs if r.fails]
    output = {**base, "devices": runs, "failing_devices": [r.device for r in failing],
              "operations": list(facts.operations)}
    if not failing:
        shown = ", ".join(devices) if devices != [""] else "this worker"
        missing = "".join(f"; not run on {d}: {why}" for d, why in skipped.items())
        return halt("does not reproduce", f"the program runs without error on {shown}{missing}", status="Failed",
                    extra=output)
    bugs = [r for r in failing if r.triage.get("verdict") == "torch-bug"]
    if not bugs:
        first = failing[0]
        return halt(f"generator bug: {first.error} ({first.triage.get('phase')})"[:300],
                    f"generator bug: {first.triage.get('reason', first.error)}", status="Failed",
                    extra={**output, "error": first.error, "exception": exception_class(first.error),
                           "triage": first.triage, "operations": list(first.triage.get("operators", ()))})
    wanted = exception_class(state.fuzz_error) if state.fuzz_error else ""
    same = [r for r in bugs if not wanted or exception_class(r.error) == wanted]
    if not same:
        reason = f"the program fails, but with {bugs[0].error}, not with the fuzzer's {state.fuzz_error}"
        return halt("a different error", reason, status="Failed", extra=output)
    exception, message = error_of(same[0].output)
    output |= {"error": same[0].error, "exception": exception or exception_class(same[0].error), "message": message,
               "failing_devices": [r.device for r in same], "triage": same[0].triage,
               "operations": list(same[0].triage.get("operators") or facts.operations)}
    where = ", ".join(r.device for r in same if r.device) or "every run"
    return StageResult(summary=f"{same[0].error} on {where} ({same[0].triage.get('phase')})"[:300], output=output)


def minimize_stage(ctx: RunContext, state: FuzzState) -> StageResult:
    """The existing minimizer over the checkout, on a failing device, keeping the same error.

    The device statement stays in every candidate, after its imports (`programs.with_device`):
    a bug that needs the device keeps it; one that does not loses it, and the smaller program
    is kept only if it still fails, with the same error, on exactly the devices the original
    failed on (then, without a device, it is one device-independent case, which needs every
    device to fail). The expected failure is checked before minimizing starts."""
    if skip := halted(state):
        return skip
    clock = phase_clock(ctx, state, "reproduce")
    runner = program_runner(ctx, ensure_checkout(ctx, state.job), state.build)
    device = state.failing_devices[0]
    prologue, rest = split_device(on_device(state.program, device) if device else state.program)
    passing = next((d.device for d in state.devices if not d.fails), None)
    timeout = candidate_timeout(state.devices, run_timeout(ctx, clock))
    try:
        expected = original_signature(with_device(prologue, rest), runner.run, timeout)
    except NothingToKeep:
        return StageResult(summary="the program no longer fails here: nothing to minimize", output={"minimized": None})
    if expected.kind == "exception" and expected.exc_type.rsplit(".", 1)[-1] != state.exception:
        return StageResult(summary=f"before minimizing, the program failed with {expected.describe()}, not "
                           f"{state.exception}: kept the original", output={"minimized": None})
    # A compiled-only failure keeps needing the compiler (`programs.candidate_run`), if the
    # original passes with compiling off (else that check would reject every candidate).
    compiled = state.failed_in in ("compiled", "compare") and \
        signature_of(runner.run(compile_off(with_device(prologue, rest)), timeout)) is None
    run = candidate_run(runner.run, prologue, expected, passing, compiled=compiled)
    asked = ctx.params.get("minimize_budget_s")
    budget = minimize_budget(clock.remaining_s, state.devices, float(asked) if asked else None)
    if budget < 2 * timeout:
        return StageResult(summary=f"no time to minimize ({budget:.0f} s left after the test stage's reserve)",
                           output={"minimized": None})
    outcome = minimize_repro(rest, run=run, cold_run=run, expected=expected, timeout_s=timeout, budget_s=budget)
    result = outcome.result
    if not outcome.reproduces or result.final_lines >= result.original_lines:
        return StageResult(summary="nothing smaller keeps the same error", output={"minimized": None})
    keeps_device = bool(prologue) and needs_device(prologue, result.source)
    smaller = with_device(prologue, result.source) if keeps_device else result.source
    all_fail = len(state.failing_devices) == len(state.devices)
    if prologue and not keeps_device and not all_fail:
        return StageResult(summary="the smaller program lost the device it fails on: kept the original",
                           output={"minimized": None})
    devices = [d.device for d in state.devices] if keeps_device or not prologue else [""]
    again = run_on_devices(runner, smaller, devices, run_timeout(ctx, clock))
    failing = [r.device for r in again if r.fails and exception_class(r.error) == state.exception]
    if failing != (state.failing_devices if devices != [""] else [""]) or \
            any(r.fails and r.device not in failing for r in again):
        return StageResult(summary="the smaller program fails differently: kept the original",
                           output={"minimized": None})
    lines = f"{result.original_lines + bool(prologue)} -> {result.final_lines + keeps_device} lines"
    if compiled:
        lines += "; still passes with compiling off"
    judged = next((r.triage for r in again if r.fails), {})
    ops = list(judged.get("operators") or operations(smaller) or state.operations)
    output = {"program": smaller, "minimized": {"lines": lines, "budget_s": round(budget)}, "operations": ops}
    if devices == [""]:
        output |= {"devices": again, "failing_devices": [""]}
        lines += "; fails without naming a device: one device-independent test"
    return StageResult(summary=lines, output=output)


_ACCELERATORS = ("cuda", "xpu", "rocm", "hpu")


def repro_queue(state: FuzzState) -> str:
    """repro-gpu once the repository's configured devices name an accelerator, else repro-cpu."""
    devices = state.config.get("devices") or ()
    return GPU_QUEUE if any(d in _ACCELERATORS for d in devices) else CPU_QUEUE


STAGES: list[Stage] = [
    Stage("inputs", inputs_stage, state=FuzzState),
    Stage("checkout", checkout_stage, queue=repro_queue, state=FuzzState),
    Stage("build", build_stage, queue=repro_queue, state=FuzzState),
    Stage("fuzz", fuzz_stage, queue=repro_queue, state=FuzzState),
    Stage("reproduce", reproduce_stage, queue=repro_queue, state=FuzzState),
    Stage("minimize", minimize_stage, queue=repro_queue, optional=True, state=FuzzState),
    Stage("diagnose", diagnose_stage, queue=repro_queue, optional=True, state=FuzzState),
    Stage("test", test_stage, queue=repro_queue, state=FuzzState),
    Stage("fix", fix_stage, queue=repro_queue, state=FuzzState),
    Stage("publish", publish_stage, state=FuzzState),
    Stage("report", report_stage, state=FuzzState),
]
