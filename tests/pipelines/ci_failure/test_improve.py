"""The dispatch job (`improve`): inputs -> the CI job's stages, with raw logs, a run URL, an
existing test, and inputs that cannot work."""

from __future__ import annotations

import io
import zipfile

from app.engine.git.repo import remote_branch_tip
from app.pipelines.base import run_pipeline
from app.pipelines.ci_failure.improve import STAGES, inputs_stage
from app.pipelines.ci_failure.state import CIState
from tests.fakes.ci_project import DETERMINISTIC_TEST

# What `pytest -q tests/test_calc.py` prints in CI for the fixture project.
RAW_LOG = """\
.F                                                                       [100%]
=================================== FAILURES ===================================
_____________________________ test_divide_by_zero ______________________________

    def test_divide_by_zero():
>       assert safe_divide(1, 0) == float("inf")

tests/test_calc.py:9:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

a = 1, b = 0

    def safe_divide(a, b):
        \"\"\"Division that returns inf instead of raising (it does not, yet).\"\"\"
>       return a / b
E       ZeroDivisionError: division by zero

calc/__init__.py:7: ZeroDivisionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_divide_by_zero - ZeroDivisionError: division by zero
1 failed, 1 passed in 0.05s
"""


def _dispatch(world, **inputs) -> dict:
    """`Run(kind=improve).params` as the webhook writes them for a workflow_dispatch."""
    base = {"deterministic": "true", "url": "", "prompt": "", "raw-logs": "", "existing-test-path": ""}
    return {**base, **inputs, "repo": world.project.repo, "ref": "refs/heads/main",
            "workflow": ".github/workflows/scrub-dispatch.yml"}


def _run(world, params, **settings):
    ctx = world.context(params, **settings)
    finished = run_pipeline(STAGES, ctx, any_queue=True)
    state = {k: v for out in ctx.completed_stages().values() for k, v in out.items()}
    return ctx, finished, state


def test_dispatch_with_raw_logs_reproduces_and_opens_a_draft_pr(ci_world):
    params = _dispatch(ci_world, **{"raw-logs": RAW_LOG, "prompt": "safe_divide must return inf"})
    ctx, finished, state = _run(ci_world, params)
    assert finished.status == "succeeded", ctx.lines
    assert state["job"]["test"] == DETERMINISTIC_TEST
    assert state["job"]["head_sha"] == ci_world.project.head_sha  # resolved from the dispatch ref
    assert state["verdict"] == "deterministic" and state["hint_confirmed"] is True
    assert remote_branch_tip(ci_world.project.bare, state["branch"]) == state["commits"][0]
    pulls = ci_world.github.writes_to("POST", "/pulls")
    assert len(pulls) == 1 and pulls[0].json["base"] == "main"
    report = ctx.artifacts["report.md"][1]
    assert "**Status**: Success" in report and "safe_divide must return inf" in report


def test_dispatch_with_a_run_url_fetches_and_parses_its_logs(ci_world):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("0_tests (3.11).txt", RAW_LOG)
    run = ci_world.github.add_workflow_run(
        ci_world.project.repo, 4242, head_sha=ci_world.project.head_sha, head_branch="main",
        jobs=[{"name": "tests (3.11)", "conclusion": "failure"}], logs_zip=archive.getvalue(),
    )
    params = _dispatch(ci_world, url=run["html_url"], deterministic="false")
    ctx = ci_world.context(params)
    job = inputs_stage(ctx, CIState()).output["job"]
    assert job.test == DETERMINISTIC_TEST and job.exception == "ZeroDivisionError"
    assert job.run_url == run["html_url"] and job.head_sha == ci_world.project.head_sha
    assert job.job_name == "tests (3.11)" and len(job.signature) == 64
    assert job.deterministic_hint is False  # a hint, checked later by the reruns


def test_existing_test_path_skips_test_creation_and_reruns_that_test(ci_world):
    params = _dispatch(ci_world, **{"existing-test-path": DETERMINISTIC_TEST, "raw-logs": RAW_LOG})
    ctx, finished, state = _run(ci_world, params)
    assert state["node_id"] == DETERMINISTIC_TEST and state["verdict"] == "deterministic"
    assert state["test_created"] == DETERMINISTIC_TEST and "generated" not in state
    assert not ci_world.github.writes  # nothing to publish: no branch, no PR, no comment
    assert "| test | skipped |" in ctx.artifacts["report.md"][1]
    assert finished.status == "succeeded"


def test_dispatch_without_logs_or_test_fails_with_a_reason(ci_world):
    ctx, finished, state = _run(ci_world, _dispatch(ci_world))
    assert finished.status == "failed"
    assert "neither `url`, `raw-logs` nor `existing-test-path`" in ctx.artifacts["report.md"][1]


def test_a_run_url_of_another_repository_is_refused(ci_world):
    params = _dispatch(ci_world, url="https://github.com/evil/other/actions/runs/1")
    halt = inputs_stage(ci_world.context(params), CIState()).output["halt"]
    assert "belongs to evil/other" in halt.reason and halt.status == "Failed"
    assert not ci_world.github.requests  # no log of another repository was asked for


def test_the_shipped_dispatch_workflow_offers_exactly_the_inputs_the_job_reads():
    import yaml

    from app.github.webhooks import DISPATCH_WORKFLOW
    from tests.conftest import ROOT

    workflow = yaml.safe_load((ROOT / ".github/workflows" / DISPATCH_WORKFLOW).read_text())
    inputs = workflow[True]["workflow_dispatch"]["inputs"]  # YAML 1.1 reads the key `on` as True
    # The improve job's inputs, and the fuzz job's (`fuzz-seed`, `fuzzed-program`: app.pipelines.fuzz).
    assert set(inputs) == {"deterministic", "url", "prompt", "raw-logs", "existing-test-path",
                           "fuzz-seed", "fuzzed-program"}
    assert inputs["deterministic"]["type"] == "boolean"
    assert workflow["permissions"] == {}


def test_a_remote_among_the_inputs_is_ignored(ci_world, tmp_path):
    """Dispatch inputs are untrusted: `remote` must not choose what is fetched or where the
    token goes; the checkout is always the installation's repository."""
    from tests.fakes.ci_project import make_ci_project

    hostile = make_ci_project(tmp_path / "hostile", slow_s=1.0)
    from app.engine.git.repo import git

    git("commit", "--allow-empty", "-qm", "other", cwd=hostile.bare.parent / "src", check=False)
    git("push", "-q", str(hostile.bare), "HEAD:main", cwd=hostile.bare.parent / "src")
    hostile_head = git("rev-parse", "main", cwd=hostile.bare).strip()
    assert hostile_head != ci_world.project.head_sha
    params = _dispatch(ci_world, **{"raw-logs": RAW_LOG, "remote": hostile.bare.as_uri()})
    ctx = ci_world.context(params)
    result = inputs_stage(ctx, CIState())
    assert result.output["job"].head_sha == ci_world.project.head_sha
