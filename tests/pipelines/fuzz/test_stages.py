"""The fuzz job end to end: the tlib project, its fuzzer, the sandbox, the fake GitHub."""

from __future__ import annotations

from app.engine.git.repo import SCRUBBOT_EMAIL, git, remote_branch_tip
from app.pipelines.base import CPU_QUEUE, GPU_QUEUE, Handoff, run_pipeline
from app.pipelines.fuzz.stages import STAGES, repro_queue
from app.pipelines.fuzz.state import FuzzState
from app.pipelines.memory import MemoryRunContext, StageRecord
from app.settings import Settings
from tests.fakes.fuzz_project import BREAKING_FIX_MEAN, FIX_MEAN, FIX_SOFTPLUS, NON_FIX


def _show(bare, commit, path):
    return git("show", f"{commit}:{path}", cwd=bare)


def test_seed_without_fix_command_gives_a_verified_xfail_test_and_a_draft_pr(fuzz_world):
    # Limits so generous that the minimizer stops because nothing smaller fails, never on time.
    ctx, finished, state = fuzz_world.run({"fuzz-seed": "1", "minimize_budget_s": 3000}, phase_reproduce_s=9000)
    assert finished.status == "succeeded", ctx.lines
    assert state["fuzz_error"] == "ZeroDivisionError: division by zero"
    reproduce = ctx.completed_stages()["reproduce"]
    assert [(d["device"], d["error"]) for d in reproduce["devices"]] == [
        ("cpu", "ZeroDivisionError: division by zero"), ("accel", "ZeroDivisionError: division by zero")]
    # Every device fails and the bug does not need the device: the minimized program drops it
    # and the test is one device-independent case.
    assert state["program"].split() == ["import", "tlib", "tlib.mean(tlib.tensor([]))"], state["program"]
    assert state["failing_devices"] == [""]
    generated = state["generated"]
    assert generated["path"] == "tests/test_ops.py" and generated["name"] == "test_fuzz_seed_1"
    assert state["verification"]["unmarked"]["statuses"] == {"": "FAILED"}
    assert state["verification"]["marked"]["statuses"] == {"": "XFAIL"}

    bare = fuzz_world.project.bare
    tip = remote_branch_tip(bare, "scrub/fuzz-1")
    assert state["commits"] == [tip]  # no fix command: the test alone
    test_file = _show(bare, tip, "tests/test_ops.py")
    assert "def test_mean_single" in test_file  # added to the file that covers mean
    assert "# Found by fuzz seed 1" in test_file and "python tools/fuzz.py --seed 1" in test_file
    assert test_file.count("xfail(strict=True") == 1
    message = git("log", "-1", "--format=%an <%ae>%n%B", tip, cwd=bare)
    assert f"Scrubbot <{SCRUBBOT_EMAIL}>" in message and "Fuzz seed: 1" in message
    pulls = fuzz_world.github.writes_to("POST", "/pulls")
    assert len(pulls) == 1 and pulls[0].json["draft"] is True and pulls[0].json["head"] == "scrub/fuzz-1"
    report = ctx.artifacts["report.md"][1]
    assert "**Status**: Success" in report
    for stage in ("inputs", "checkout", "fuzz", "reproduce", "minimize", "test", "publish"):
        assert f"| {stage} |" in report
    assert "| fix | skipped |" in report


def test_device_caveat_only_the_failing_device_is_an_expected_failure_and_the_fix_lands(fuzz_world):
    ctx, finished, state = fuzz_world.run({"fuzz-seed": "2", "minimize_budget_s": 5}, fix_command=FIX_SOFTPLUS)
    assert finished.status == "succeeded", ctx.lines
    assert state["failing_devices"] == ["accel"]
    assert state["tolerances"] == {"rtol": 0.05, "atol": 1.0}
    assert state["generated"]["path"] == "tests/test_compile.py"  # a compiling program
    assert state["verification"]["marked"]["statuses"] == {"cpu": "PASSED", "accel": "XFAIL"}
    assert state["fix"]["verified"], state["fix"]
    checks = state["fix"]["checks"]
    assert checks["passes"]["statuses"] == {"cpu": "PASSED", "accel": "PASSED"}
    assert checks["fails_when_reverted"]["statuses"] == {"cpu": "PASSED", "accel": "FAILED"}

    bare = fuzz_world.project.bare
    test_commit, fix_commit = state["commits"]
    assert remote_branch_tip(bare, "scrub/fuzz-2") == fix_commit
    assert git("rev-parse", f"{fix_commit}^", cwd=bare).strip() == test_commit
    marked = _show(bare, test_commit, "tests/test_compile.py")
    assert "pytest.param('accel', marks=pytest.mark.xfail(strict=True" in marked
    assert "pytest.param('cpu', id='cpu')" in marked and "rtol=0.05" in marked
    final = _show(bare, fix_commit, "tests/test_compile.py")
    assert "xfail" not in final and "def test_fuzz_seed_2(device)" in final
    assert "fast path" not in _show(bare, fix_commit, "tlib/compiler.py")
    changed = sorted(git("show", "--name-only", "--format=", fix_commit, cwd=bare).split())
    assert changed == ["tests/test_compile.py", "tlib/compiler.py"]
    # Each commit went through the repository's linter (ruff.toml), in the sandbox.
    assert [(k, v["linter"], v["exit"]) for k, v in state["lint"].items()] == [("test", "ruff", 0), ("fix", "ruff", 0)]
    assert "**Status**: Success" in ctx.artifacts["report.md"][1]


def test_fix_summary_answers_the_seed_questions_in_the_fix_commit(fuzz_world):
    ctx, finished, state = fuzz_world.run({"fuzz-seed": "1", "minimize_budget_s": 5}, fix_command=FIX_MEAN)
    assert state["fix"]["verified"], state["fix"]
    fix_commit = state["commits"][1]
    message = git("log", "-1", "--format=%B", fix_commit, cwd=fuzz_world.project.bare)
    assert message.startswith("Return nan for the mean of an empty tensor")
    assert "What was the root cause? No guard for an empty input." in message
    assert "What edge cases does the fix handle? (not answered by the fix command)" in message
    assert "Fuzz seed: 1" in message
    files = git("show", "--name-only", "--format=", fix_commit, cwd=fuzz_world.project.bare).split()
    assert ".scrubbot-fix-summary.md" not in files
    pulls = fuzz_world.github.writes_to("POST", "/pulls")
    assert pulls[0].json["title"] == "Return nan for the mean of an empty tensor"


def test_a_fix_that_does_not_fix_is_partial_and_not_published(fuzz_world):
    ctx, finished, state = fuzz_world.run({"fuzz-seed": "2", "minimize_budget_s": 5}, fix_command=NON_FIX)
    assert state["fix"]["verified"] is False
    assert "the test does not pass" in state["fix"]["summary"]
    assert len(state["commits"]) == 1
    assert "**Status**: Partial" in ctx.artifacts["report.md"][1]


def test_a_fix_that_breaks_a_related_test_is_partial(fuzz_world):
    ctx, finished, state = fuzz_world.run({"fuzz-seed": "1", "minimize_budget_s": 5}, fix_command=BREAKING_FIX_MEAN)
    fix = state["fix"]
    assert fix["checks"]["passes"]["ok"] and not fix["checks"]["related"]["ok"]
    assert fix["checks"]["related"]["failed"] == ["tests/test_ops.py::test_mean", "tests/test_ops.py::test_mean_single"]
    assert fix["verified"] is False and len(state["commits"]) == 1
    report = ctx.artifacts["report.md"][1]
    assert "**Status**: Partial" in report and "breaks related tests" in report


def test_a_seed_that_does_not_fail_is_reported_failed_with_nothing_published(fuzz_world):
    ctx, finished, state = fuzz_world.run({"fuzz-seed": "3"})
    assert finished.status == "failed"
    assert "without a failure" in state["halt"]["reason"]
    assert not fuzz_world.github.writes
    assert "**Status**: Failed" in ctx.artifacts["report.md"][1]


def test_retry_updates_the_same_branch_and_pull_request(fuzz_world):
    ctx, first, state = fuzz_world.run({"fuzz-seed": "1", "minimize_budget_s": 5})
    retry = fuzz_world.context({"fuzz-seed": "1", "minimize_budget_s": 5})
    retry.stages = [r for r in ctx.stages if r.stage not in ("publish", "report")]
    assert run_pipeline(STAGES, retry, any_queue=True).status == "succeeded"
    again = retry.completed_stages()["publish"]
    assert again["branch"] == "scrub/fuzz-1" and again["pr_number"] == state["pr_number"]
    assert again["pushed"] is False  # the same change on the same base: the branch is left as it was
    assert remote_branch_tip(fuzz_world.project.bare, "scrub/fuzz-1") == state["commits"][-1]
    assert [w.method for w in fuzz_world.github.writes_to(path_contains="/pulls")] == ["POST"]


def test_the_queue_rule_reads_the_devices_of_the_typed_state():
    assert repro_queue(FuzzState.load({"config": {"devices": ["cpu", "cuda"]}})) == GPU_QUEUE
    assert repro_queue(FuzzState.load({"config": {"devices": ["cpu"]}})) == CPU_QUEUE
    assert repro_queue(FuzzState()) == CPU_QUEUE  # before the checkout read the repository's config


def test_a_run_resumed_on_the_cpu_queue_hands_an_accelerator_fuzz_stage_to_the_gpu_queue(tmp_path):
    ctx = MemoryRunContext(settings=Settings(data_dir=tmp_path), queue=CPU_QUEUE, params={"repo": "acme/tlib"})
    ctx.stages = [StageRecord("inputs", "done", output={"job": {"repo": "acme/tlib", "seed": 4}}),
                  StageRecord("checkout", "done", output={"config": {"devices": ["cpu", "cuda"]}})]
    # The build is chosen on the worker that runs the code: a GPU worker picks an accelerator build.
    assert run_pipeline(STAGES, ctx) == Handoff(queue=GPU_QUEUE, stage="build")


def test_bad_inputs_halt_the_run_and_every_later_stage_skips(tmp_path):
    ctx = MemoryRunContext(settings=Settings(data_dir=tmp_path), params={"repo": "acme/tlib"})
    finished = run_pipeline(STAGES, ctx, any_queue=True)
    assert finished.status == "failed"
    reason = "give exactly one of a fuzz seed or a fuzzed program"
    assert ctx.completed_stages()["inputs"]["halt"] == {"reason": reason, "status": "Failed", "phase": "",
                                                        "stage": ""}
    skipped = [r.stage for r in ctx.stages if r.status == "skipped" and r.summary == f"skipped: {reason}"]
    assert skipped == ["checkout", "build", "fuzz", "reproduce", "minimize", "diagnose", "test", "publish"]  # fix: no command
    assert "**Status**: Failed" in ctx.artifacts["report.md"][1] and reason in ctx.artifacts["report.md"][1]


def test_a_run_halted_under_the_dict_based_state_resumes_and_reports_its_halt(tmp_path):
    # Stage outputs stored by the previous code: plain JSON, `halt` a dict without phase or stage.
    halt = {"reason": "the program runs without error on cpu", "status": "Failed"}
    program = "import tlib\ntlib.mean(tlib.tensor([1.0]))\n"
    ctx = MemoryRunContext(settings=Settings(data_dir=tmp_path), params={"repo": "acme/tlib"})
    ctx.stages = [
        StageRecord("inputs", "done", output={"job": {"repo": "acme/tlib", "seed": 7, "head_sha": "c" * 40},
                                              "offline": False}),
        StageRecord("checkout", "done", output={"commit": "c" * 40, "config": {"devices": ["cpu"]},
                                                "phase_reproduce_started": 1700000000.0}),
        StageRecord("fuzz", "done", output={"program": program, "original_program": program, "fuzz_error": ""}),
        StageRecord("reproduce", "done", output={"halt": halt, "failing_devices": [], "operations": ["mean"],
                                                 "devices": [{"device": "cpu", "fails": False, "error": "",
                                                              "output": ""}]}),
    ]
    finished = run_pipeline(STAGES, ctx, any_queue=True)
    assert finished.status == "failed" and finished.verdict == "failed: no failing test"
    skipped = [r.stage for r in ctx.stages if r.status == "skipped" and r.summary == f"skipped: {halt['reason']}"]
    assert skipped == ["minimize", "diagnose", "test", "publish"]
    report = ctx.artifacts["report.md"][1]
    assert "**Status**: Failed" in report and halt["reason"] in report and "cpu: passes" in report
    assert ctx.artifacts["fuzzed_program.py"] == ("repro", program)
