"""The CI reproduction job: a repeated CI failure -> verdict, test, draft PR, report.

Stages (each checkpointed; seed 002's phases in brackets):

    job       the failure and the failing commit, from the run's params        [reproduce]
    checkout  the repo at that commit: cached mirror + worktree; owners, authors
    build     the commit's own build (app.pipelines.kit.build): a release, the nearest nightly
              with the checkout's Python overlaid, a build command's wheel, or needs-build
    rerun     the failing test K times in the sandbox, on that build; sequential test ->
              deterministic / flaky (rate, interval) / not reproducible here
    diagnose  the experiments the failure's pattern calls for (app.pipelines.ci_failure.diagnosis)
    test      deterministic -> the failing test's code copied beside it as an expected failure
              (or, when it cannot be copied, the test run alone);
              flaky -> a stress test, its failures per minute, the 20-minute check;
              either way verified to xfail in the sandbox
    fix       only with `SCRUB_FIX_COMMAND` (app.pipelines.ci_failure.fix)        [fix]
    publish   branch scrub/<signature>, test commit (+ fix commit), draft PR      [pr]
    report    report.md artifact; the run's status (app.pipelines.ci_failure.publish)

Untrusted code (the repo's tests) runs only through `TreeRunner` (the sandbox), on the build the
`build` stage chose (never silently on the worker's own torch). A stage that
cannot go on records `halt`; the stages after it skip and the report says why.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from app.engine.verdict import rerun as reruns
from app.engine.git.codeowners import owners_for, read_codeowners
from app.engine.git.repo import GitError, head_commit, last_authors
from app.engine.git.tree import Checkout, UnsafePath
from app.engine.testgen.copied_test import CopiedTest, Uncopyable, copied_test
from app.engine.testgen.repro_test import node_repro_test, to_node_id
from app.engine.sandbox.treerun import TreeTooLarge, pytest_argv
from app.pipelines.base import RunContext, Stage, StageResult
from app.pipelines.ci_failure.diagnosis import diagnose_stage
from app.pipelines.ci_failure.fix import fix_stage
from app.pipelines.ci_failure.job import CIJob
from app.pipelines.ci_failure.publish import publish_stage, report_stage
from app.pipelines.ci_failure.state import CIState, GeneratedFile, job_of, repro_queue
from app.pipelines.kit.build import build_stage as kit_build_stage
from app.pipelines.kit.checkout import ensure_checkout
from app.pipelines.kit.phases import PhaseClock, halt, halted, phase_clock
from app.pipelines.kit.sandbox import run_timeout, tree_runner
from app.pipelines.kit.stress import Stressed, stress
from app.pipelines.kit.testcheck import check_test
from app.pipelines.kit.xfail import XfailCheck, verify_xfail

PARALLEL_RUNS = 2
NEEDS_BUILD = "needs-build"  # the verdict when the commit's build is not at hand


def job_stage(ctx: RunContext, state: CIState) -> StageResult:
    """The job from `Run(kind=ci_failure).params` (see app/engine/cilogs/README.md)."""
    params = ctx.params
    job = CIJob.from_failure(params["repo"], params.get("failure", {}), params.get("workflow_run", {}))
    job.signature = job.signature or params.get("fingerprint", "")
    classification = params.get("classification") or {}
    if classification.get("label"):
        job.classified = "; ".join([f"{classification['label']}", *classification.get("evidence", [])[:3],
                                    *([params["why"]] if params.get("why") else [])])[:500]
    output = {"job": job}
    if not job.test:
        return halt("no test to rerun", "the CI failure names no test to rerun", status="Failed", extra=output)
    return StageResult(summary=f"{job.test} at {job.head_sha[:12]}", output=output)


def checkout_stage(ctx: RunContext, state: CIState) -> StageResult:
    if skip := halted(state):
        return skip
    # The reproduce phase starts here, on the repro worker: time spent queued does not count.
    job, clock = job_of(state), phase_clock(ctx, state, "reproduce")
    try:
        worktree = ensure_checkout(ctx, job)
    except GitError as exc:
        return halt("checkout failed", f"checkout failed: {exc}", status="Failed", extra=clock.state())
    node = to_node_id(job.existing_test or job.test, root=worktree)
    test_file = node.split("::")[0]
    owners = list(owners_for(read_codeowners(worktree), test_file))
    authors = last_authors(worktree, test_file)
    return StageResult(
        summary=f"{job.repo}@{head_commit(worktree)[:12]}; test {node}",
        output={"worktree": str(worktree), "commit": head_commit(worktree), "node_id": node,
                "test_file": test_file, "owners": owners, "authors": authors, **clock.state()},
    )


def build_stage(ctx: RunContext, state: CIState) -> StageResult:
    """The torch that reruns the commit's tests: its own build, or needs-build (app.pipelines.kit.build)."""
    if skip := halted(state):
        return skip
    result = kit_build_stage(ctx, job_of(state), next_stage="rerun")
    stopped = result.output.get("halt")
    if stopped is not None and stopped.reason.startswith("needs-build"):
        result.output["verdict"] = NEEDS_BUILD
    return result


def rerun_stage(ctx: RunContext, state: CIState) -> StageResult:
    """Rerun the failing test until the sequential test decides, or the phase runs out."""
    if skip := halted(state):
        return skip
    job, clock = job_of(state), phase_clock(ctx, state, "reproduce")
    if job.needs_gpu and not ctx.settings.gpu:
        return halt("needs a GPU", "the failure needs CUDA and this worker has no GPU "
                    "(route the run to a repro-gpu worker)", status="Failed")
    runner = tree_runner(ctx, ensure_checkout(ctx, job), build=state.build)
    argv = pytest_argv(state.node_id)
    sequential = reruns.Sequential()
    last_output = ""
    try:
        with ThreadPoolExecutor(PARALLEL_RUNS) as pool:
            while sequential.verdict() is None and not clock.expired:
                timeout = run_timeout(ctx, clock)
                results = list(pool.map(runner.run, [argv] * PARALLEL_RUNS, [timeout] * PARALLEL_RUNS))
                for result in results:
                    if result.timed_out and clock.expired:
                        continue  # cut by the phase, not by the test: no evidence either way
                    sequential.add(reruns.outcome_of(result, exception=job.exception, kind=job.kind))
                    last_output = result.output.tail_text(4000)
    except TreeTooLarge as exc:
        return halt("checkout too large", str(exc), status="Failed")
    summary = sequential.summary()
    verdict = sequential.verdict()
    output = {"rerun": summary, "rerun_output": last_output}
    if verdict is None:
        best = sequential.final_verdict() if summary["failures"] else None
        output |= {"verdict": best}
        detail = f"{summary['failures']}/{summary['runs']} runs failed"
        return halt(f"phase limit: {detail}", **clock.exceeded("rerun", detail), status="Partial", extra=output)
    output |= {"verdict": verdict}
    if job.deterministic_hint is not None:
        output["hint_confirmed"] = job.deterministic_hint == (verdict == reruns.DETERMINISTIC)
    line = f"{verdict}: {summary['failures']}/{summary['runs']} runs failed"
    if verdict == reruns.NOT_REPRODUCIBLE:
        return halt(line, f"not reproducible here: {line}", status="Failed", extra=output)
    if verdict == reruns.CANNOT_RUN:
        return halt(line, "the test could not run here (see the output below)", status="Failed", extra=output)
    return StageResult(summary=line, output=output)


def test_stage(ctx: RunContext, state: CIState) -> StageResult:
    """A verified expected-failure test: the repro (deterministic) or a stress test (flaky)."""
    if skip := halted(state):
        return skip
    job, clock = job_of(state), phase_clock(ctx, state, "reproduce")
    if job.existing_test:
        return StageResult(summary=f"existing test {job.existing_test}: nothing to create",
                           output={"test_created": job.existing_test}, skipped=True)
    worktree = ensure_checkout(ctx, job)
    if state.verdict == reruns.FLAKY:
        return stress_stage(ctx, state, job, worktree, clock)
    generated = _repro_test(worktree, state, job)
    runner = tree_runner(ctx, worktree, build=state.build)
    if generated.copied is not None:  # first: without its marker it fails as CI did
        first = check_test(runner, generated.path, generated.copied.unmarked, generated.copied.name, marked=False,
                           devices=[], failing=[], style="pytest", exception=job.exception, message="",
                           timeout_s=run_timeout(ctx, clock))
        if not first.ok:
            why = "the copied test does not fail as CI did: " + "; ".join(first.problems)
            return halt("copied test does not fail", why, status="Partial",
                        extra={"generated": generated.file, "test_created": generated.path})
        generated = replace(generated, file=replace(generated.file, note=f"{generated.file.note}; {first.summary}"))
    worktree.write_text(generated.path, generated.source)  # never through a link of the checkout
    check = _verify_marked(runner, generated, run_timeout(ctx, clock))
    output = {"generated": generated.file, "verification": check, "test_created": generated.path}
    if not check.xfailed:
        if clock.expired:
            return halt("verification cut by the phase limit", **clock.exceeded("test"), status="Partial", extra=output)
        return halt("generated test did not xfail", "the generated test did not xfail: "
                    + check.summary, status="Partial", extra=output)
    return StageResult(summary=f"{generated.node}: " + (f"{generated.file.note}; " if generated.copied else "")
                       + "xfails as expected", output=output)


@dataclass(frozen=True)
class _Made:
    path: str
    source: str
    node: str  # what to run to verify it
    file: GeneratedFile
    copied: CopiedTest | None = None


def _repro_test(worktree: Checkout, state: CIState, job: CIJob) -> _Made:
    """The failing test's own code, copied beside it and marked; when it cannot be copied (a
    parametrized test, a node id the file does not show), a test that runs it alone."""
    try:
        copied = copied_test(worktree.read_text(state.test_file), state.node_id, reason=job.failure_line)
    except (Uncopyable, UnsafePath, SyntaxError, UnicodeDecodeError) as exc:
        why = f"the test runs the original alone: it cannot be copied ({exc})"
    else:
        note = f"copied from {state.node_id} as {copied.name}"
        return _Made(copied.path, copied.marked, copied.node_id,
                     GeneratedFile(copied.path, copied.marked, "repro", unmarked=copied.unmarked, note=note), copied)
    style = "unittest" if "::" not in job.test and "." in job.test else "pytest"
    made = node_repro_test(state.node_id, reason=job.failure_line, style=style)
    return _Made(made.path, made.source, made.path, GeneratedFile(made.path, made.source, "repro", note=why))


def _verify_marked(runner, generated: _Made, timeout_s: float) -> XfailCheck:
    """With its marker the test xfails; a PyTorch per-device `expectedFailure<Device>` reports a
    pass under pytest (it swallows the failure), which is read as the xfail it is."""
    copied = generated.copied
    if copied is None or copied.idiom != "device":
        return verify_xfail(runner, generated.node, timeout_s)
    device = copied.node_id.rsplit("_", 1)[-1]
    check = check_test(runner, copied.path, copied.marked, copied.name, marked=True, devices=[device],
                       failing=[device], style="pytorch", exception="", message="", timeout_s=timeout_s)
    return XfailCheck(xfailed=check.ok, summary=check.summary, output=check.output)


def stress_stage(ctx: RunContext, state: CIState, job: CIJob, worktree: Checkout, clock: PhaseClock) -> StageResult:
    """Flaky verdict: seed 004's stress test of the failing test (`app.pipelines.kit.stress`)."""
    found = stress(ctx, worktree, state.node_id, job.failure_line, clock, stage="test", build=state.build)
    if not isinstance(found, Stressed):
        return found  # the halt: no time left to measure, or the measuring run broke
    final, check, verification = found.test, found.check, found.verification
    output = {
        "generated": GeneratedFile(final.path, final.source, "stress"),
        "stress": found.to_dict(),
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
    return StageResult(summary=f"{final.path}: {found.measurement.rate_per_minute:.1f} failures/min; xfails",
                       output=output)


# Everything after the job stage is shared with the dispatch job (app.pipelines.ci_failure.improve).
WORK_STAGES: list[Stage] = [
    Stage("checkout", checkout_stage, queue=repro_queue, state=CIState),
    Stage("build", build_stage, queue=repro_queue, state=CIState),
    Stage("rerun", rerun_stage, queue=repro_queue, state=CIState),
    Stage("diagnose", diagnose_stage, queue=repro_queue, optional=True, state=CIState),
    Stage("test", test_stage, queue=repro_queue, state=CIState),
    Stage("fix", fix_stage, queue=repro_queue, state=CIState),
    Stage("publish", publish_stage, state=CIState),
    Stage("report", report_stage, state=CIState),
]

STAGES: list[Stage] = [Stage("job", job_stage, state=CIState), *WORK_STAGES]
