"""The CI reproduction job end to end: a local bare repo, the sandbox, the fake GitHub."""

from __future__ import annotations

import re

from app.engine.git.repo import SCRUBBOT_EMAIL, git, remote_branch_tip
from app.pipelines.base import GPU_QUEUE, run_pipeline
from app.engine.sandbox.capture import CapturedOutput
from app.engine.sandbox.runner import ProcessResult
from app.pipelines.ci_failure import stages
from app.pipelines.ci_failure.job import CIJob
from app.pipelines.ci_failure.stages import STAGES, rerun_stage
from app.pipelines.ci_failure.state import CIState
from tests.fakes.ci_project import DETERMINISTIC_TEST, FLAKY_TEST, PASSING_TEST, SLOW_TEST
from tests.pipelines.conftest import ci_params


class ScriptedRunner:
    """Stands in for the sandboxed tree runner: every run ends the same way (by default, the
    way the deterministic CI failure does)."""

    def __init__(self, output: bytes = b"E   ZeroDivisionError: division by zero\n1 failed in 0.01s\n",
                 exit_code: int = 1) -> None:
        self.output, self.exit_code, self.runs = output, exit_code, 0

    def run(self, argv, timeout_s):
        self.runs += 1
        return ProcessResult(exit_code=self.exit_code, signal=None, timed_out=False, duration_s=0.01,
                             output=CapturedOutput(head=self.output, total_bytes=len(self.output)), mode="cold")


def _run(world, params, **settings):
    ctx = world.context(params, **settings)
    finished = run_pipeline(STAGES, ctx, any_queue=True)
    outputs = ctx.completed_stages()
    state = {k: v for out in outputs.values() for k, v in out.items()}
    return ctx, finished, state


def test_deterministic_failure_gets_a_verified_repro_branch_and_draft_pr_and_a_retry_keeps_them(ci_world):
    params = ci_params(ci_world.project, DETERMINISTIC_TEST, "ZeroDivisionError", "division by zero")
    # The failing run was on another branch of the repository; the draft PR targets the default one.
    params["workflow_run"] |= {"head_branch": "release/1.2", "default_branch": "main"}
    ctx, finished, state = _run(ci_world, params)

    assert finished.status == "succeeded", ctx.lines
    assert state["verdict"] == "deterministic"
    assert state["rerun"]["failures"] == state["rerun"]["runs"] >= 17  # ln(0.01)/ln(0.75)
    assert state["verification"]["xfailed"] and state["verification"]["counts"] == {"xfailed": 1}
    # The failing test's own code, copied beside it (not a subprocess around the node id),
    # verified to fail with the CI error without its marker, then to xfail with it.
    assert state["test_created"] == "tests/test_calc.py"
    generated = state["generated"]
    assert "@pytest.mark.xfail(strict=True, reason='ZeroDivisionError: division by zero')\n" \
        "def test_divide_by_zero_repro():\n    assert safe_divide(1, 0) == float(\"inf\")" in generated["source"]
    assert "xfail" not in generated["unmarked"] and "subprocess" not in generated["source"]
    assert generated["note"].startswith("copied from tests/test_calc.py::test_divide_by_zero as test_divide_by_zero_repro")
    assert "without the marker: test FAILED" in generated["note"]

    branch = f"scrub/{params['fingerprint'][:12]}"
    tip = remote_branch_tip(ci_world.project.bare, branch)
    assert tip == state["commits"][0]
    message = git("log", "-1", "--format=%an <%ae>%n%B", tip, cwd=ci_world.project.bare)
    assert f"Scrubbot <{SCRUBBOT_EMAIL}>" in message
    assert "ZeroDivisionError: division by zero" in message
    assert params["workflow_run"]["html_url"] in message and params["fingerprint"] in message
    parent = git("rev-parse", f"{tip}^", cwd=ci_world.project.bare).strip()
    assert parent == ci_world.project.head_sha

    pulls = ci_world.github.writes_to("POST", "/pulls")
    assert len(pulls) == 1 and pulls[0].json["draft"] is True and pulls[0].json["head"] == branch
    assert pulls[0].json["base"] == "main"
    assert "**Status**: Success" in pulls[0].json["body"]
    assert not ci_world.github.writes_to("POST", "/comments")

    kind, report = ctx.artifacts["report.md"]
    assert kind == "markdown" and "**Status**: Success" in report and state["pr_url"] in report
    assert "@\u200bacme/qa" in report  # CODEOWNERS of tests/, without pinging them
    assert "Ada Lovelace" in report  # a recent author of the test file
    assert re.search(r"\| rerun \| done \| .+ \| deterministic: \d+/\d+ runs failed", report)
    assert not (ci_world.data_dir / "git/worktrees/run-1").exists()  # cleaned up; the mirror stays
    assert (ci_world.data_dir / "git/mirrors/acme__calc.git/HEAD").is_file()

    # The publish task is retried (say its worker died after the push): the stages recorded as
    # done are not redone; publish runs again on a fresh worktree.
    retry = ci_world.context(params)
    retry.stages = [r for r in ctx.stages if r.stage not in ("publish", "report")]
    assert run_pipeline(STAGES, retry, any_queue=True).status == "succeeded"
    again = retry.completed_stages()["publish"]
    assert again["branch"] == state["branch"] and again["pr_number"] == state["pr_number"]
    assert again["pushed"] is False  # the same change on the same base: the branch is left as is
    assert remote_branch_tip(ci_world.project.bare, state["branch"]) == state["commits"][0]
    # The same PR: found by its head branch; its body is the same report, so nothing is written.
    assert [w.method for w in ci_world.github.writes_to(path_contains="/pulls")] == ["POST"]


def test_flaky_failure_gets_a_stress_test_that_fails_within_the_budget(ci_world):
    params = ci_params(ci_world.project, FLAKY_TEST, "AssertionError", "cache returned a stale entry")
    params["stress_window_s"] = 8  # ~60 iterations at 20%: P(no failure) < 1e-5
    # The reruns take minutes on a loaded machine: the default 300 s reproduce phase left no time
    # to measure once (the stress record empty); the phase limit is not what this test checks.
    ctx, finished, state = _run(ci_world, params, phase_reproduce_s=3600)

    assert finished.status == "succeeded", ctx.lines
    assert state["verdict"] == "flaky"
    rerun = state["rerun"]
    assert 0 < rerun["failures"] < rerun["runs"]
    low, high = rerun["interval"]
    # A 95% interval misses the true 20% one time in twenty: assert what always holds.
    assert 0 < low <= rerun["rate"] == round(rerun["failures"] / rerun["runs"], 4) <= high < 1

    stress = state["stress"]
    assert stress["measurement"]["failures"] >= 1
    assert stress["measurement"]["rate_per_minute"] > 0
    assert stress["budget"]["passes"] and stress["budget"]["p_fail_in_budget_lower"] >= 0.95
    assert state["generated"]["kind"] == "stress" and state["verification"]["xfailed"]
    source = state["generated"]["source"]
    assert "--iterations" in source and "--workers" in source and "--timeout" in source
    assert "failures/min" in source and "pytest.mark.xfail(strict=True" in source

    report = ctx.artifacts["report.md"][1]
    assert "**Status**: Success" in report and "Stress test" in report and "Wilson" in report


def test_a_passing_test_is_not_reproducible_here_and_nothing_is_published(ci_world, monkeypatch):
    # 44 clean runs decide "not reproducible"; they are scripted here (a real checkout and
    # pipeline around them): the sandboxed reruns are what the tests above exercise.
    runner = ScriptedRunner(b"1 passed in 0.01s\n", exit_code=0)
    monkeypatch.setattr(stages, "tree_runner", lambda ctx, worktree, **_: runner)
    params = ci_params(ci_world.project, PASSING_TEST, "AssertionError", "assert 4 == 3")
    ctx, finished, state = _run(ci_world, params)
    assert finished.status == "failed"
    assert state["verdict"] == "not_reproducible" and state["rerun"]["runs"] == runner.runs >= 44
    assert not ci_world.github.writes
    assert "**Status**: Failed" in ctx.artifacts["report.md"][1]
    assert "not reproducible here" in ctx.artifacts["report.md"][1]


def test_a_phase_past_its_limit_ends_the_run_partial_and_says_why(ci_world):
    params = ci_params(ci_world.project, SLOW_TEST, "Timeout", "test timed out")
    ctx, finished, state = _run(ci_world, params, phase_reproduce_s=3.0)
    assert finished.status == "succeeded"  # the run ended on purpose; the report is Partial
    assert state["halt"]["phase"] == "reproduce" and state["halt"]["stage"] == "rerun"
    report = ctx.artifacts["report.md"][1]
    assert "**Status**: Partial" in report
    assert "the reproduce phase passed its 3 s limit during rerun" in report
    assert "| publish | skipped |" in report and not ci_world.github.writes


def test_gpu_failure_is_routed_to_the_gpu_queue_and_not_run_on_a_cpu_worker(ci_world):
    params = ci_params(ci_world.project, DETERMINISTIC_TEST, "RuntimeError", "CUDA error: an illegal memory access")
    ctx = ci_world.context(params)
    handoff = run_pipeline(STAGES, ctx)  # the default queue's worker stops at the first repro stage
    assert handoff.queue == GPU_QUEUE and handoff.stage == "checkout"
    ctx, finished, state = _run(ci_world, params)  # a CPU-only worker that runs everything
    assert state["halt"]["reason"].startswith("the failure needs CUDA") and finished.status == "failed"




def test_the_deterministic_hint_is_checked_not_trusted(ci_world, monkeypatch, tmp_path):
    # The reruns decide; the dispatch's hint is only compared with them (the sandboxed reruns
    # themselves are covered by the end-to-end tests above).
    params = ci_params(ci_world.project, DETERMINISTIC_TEST, "ZeroDivisionError", "division by zero")
    job = CIJob.from_failure(params["repo"], params["failure"], params["workflow_run"], deterministic_hint=False)
    runner = ScriptedRunner()
    monkeypatch.setattr(stages, "ensure_checkout", lambda ctx, job: tmp_path)
    monkeypatch.setattr(stages, "tree_runner", lambda ctx, worktree, **_: runner)
    state = CIState(job=job, node_id=DETERMINISTIC_TEST)
    output = rerun_stage(ci_world.context(params), state).output
    assert output["verdict"] == "deterministic" and output["hint_confirmed"] is False
    assert runner.runs >= 17  # the CI rule's 17 failures in a row, not the hint, decided
    agreeing = CIJob(**{**job.to_dict(), "deterministic_hint": True})
    assert rerun_stage(ci_world.context(params), CIState(job=agreeing, node_id=DETERMINISTIC_TEST)
                       ).output["hint_confirmed"] is True

def test_fix_command_adds_a_verified_fix_commit_and_an_unverified_fix_is_partial(ci_world):
    params = ci_params(ci_world.project, DETERMINISTIC_TEST, "ZeroDivisionError", "division by zero")
    fix = """sed -i 's|return a / b|return a / b if b else float("inf")|' calc/__init__.py"""
    ctx, finished, state = _run(ci_world, params, fix_command=fix)
    assert finished.status == "succeeded", ctx.lines
    assert state["fix"]["verified"] and state["fix"]["runs"] == 3
    test_commit, fix_commit = state["commits"]
    bare = ci_world.project.bare
    assert remote_branch_tip(bare, state["branch"]) == fix_commit
    assert git("rev-parse", f"{fix_commit}^", cwd=bare).strip() == test_commit
    changed = git("show", "--name-only", "--format=", fix_commit, cwd=bare).split()
    assert sorted(changed) == ["calc/__init__.py", state["generated"]["path"]]
    final_test = git("show", f"{fix_commit}:{state['generated']['path']}", cwd=bare)
    assert "xfail" not in final_test
    assert "**Status**: Success" in ctx.artifacts["report.md"][1]

    # Another fix command that changes something but fixes nothing, from the same reproduction
    # (a second run that starts from the first one's checkout, rerun and test stages).
    second = ci_world.context(params, run_id=2, fix_command="echo '# tried' >> calc/__init__.py")
    second.stages = [r for r in ctx.stages if r.stage in ("job", "checkout", "rerun", "test")]
    assert run_pipeline(STAGES, second, any_queue=True).status == "succeeded"
    fixed = second.completed_stages()
    assert fixed["fix"]["fix"]["verified"] is False and len(fixed["publish"]["commits"]) == 1
    assert remote_branch_tip(bare, state["branch"]) == fixed["publish"]["commits"][0]  # the fix commit is gone
    assert "**Status**: Partial" in second.artifacts["report.md"][1]

