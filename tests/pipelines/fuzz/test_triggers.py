"""Every trigger of the fuzz job ends in two verified commits: a workflow_dispatch with
`fuzz-seed`, a `/scrub fuzz <seed>` comment, and `scrub fuzz PROGRAM.py --repo PATH`."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from app.cli.main import app
from app.db.models import Run
from app.engine.git.repo import git, remote_branch_tip
from app.github.webhooks import CommandRequest, StartRun, route
from tests.fakes.fuzz_project import FIX_SOFTPLUS, FUZZER
from tests.foundation import database, enqueuer, settings  # noqa: F401  (fixtures)
from workers.execute import WorkerServices, execute_command

QUICK = {"minimize_budget_s": 5}  # the tests shorten minimization; what they check does not depend on it


def _two_verified_commits(bare, state, branch):
    test_commit, fix_commit = state["commits"]
    assert remote_branch_tip(bare, branch) == fix_commit
    assert git("rev-parse", f"{fix_commit}^", cwd=bare).strip() == test_commit
    assert "xfail(strict=True" in git("show", f"{test_commit}:tests/test_compile.py", cwd=bare)
    assert "xfail" not in git("show", f"{fix_commit}:tests/test_compile.py", cwd=bare)
    assert state["verification"]["marked"]["ok"] and state["fix"]["verified"]


def test_workflow_dispatch_with_a_fuzz_seed_ends_in_a_draft_pr_with_two_commits(fuzz_world):
    payload = {"workflow": ".github/workflows/scrub-dispatch.yml", "ref": "refs/heads/main",
               "repository": {"full_name": fuzz_world.project.repo}, "installation": {"id": 3},
               "inputs": {"fuzz-seed": "2", "fuzzed-program": "", "url": ""}, "sender": {"login": "ada"}}
    decision = route("workflow_dispatch", payload, "scrub")
    assert isinstance(decision, StartRun) and decision.kind == "fuzz" and decision.trigger == "dispatch"
    assert decision.params["fuzz-seed"] == "2" and decision.params["ref"] == "refs/heads/main"
    ctx, finished, state = fuzz_world.run({**decision.params, **QUICK}, fix_command=FIX_SOFTPLUS)
    assert finished.status == "succeeded", ctx.lines
    _two_verified_commits(fuzz_world.project.bare, state, "scrub/fuzz-2")
    pulls = fuzz_world.github.writes_to("POST", "/pulls")
    assert len(pulls) == 1 and pulls[0].json["draft"] is True and pulls[0].json["base"] == "main"


def test_dispatch_without_fuzz_inputs_stays_an_improve_job():
    payload = {"workflow": ".github/workflows/scrub-dispatch.yml", "repository": {"full_name": "o/r"},
               "inputs": {"url": "https://github.com/o/r/actions/runs/1", "fuzz-seed": ""}}
    assert route("workflow_dispatch", payload, "scrub").kind == "improve"


def test_scrub_fuzz_comment_by_a_collaborator_starts_a_fuzz_run_that_opens_the_pr(
        fuzz_world, database, settings, enqueuer):  # noqa: F811
    payload = {"action": "created", "comment": {"body": "/scrub fuzz 2", "user": {"login": "maintainer"}},
               "issue": {"number": 9, "html_url": "https://github.com/acme/tlib/issues/9"},
               "repository": {"full_name": fuzz_world.project.repo}, "installation": {"id": 3}}
    request = route("issue_comment", payload, "scrub")
    assert isinstance(request, CommandRequest) and (request.command, request.args) == ("fuzz", "2")
    fuzz_world.github.add_collaborator(fuzz_world.project.repo, "maintainer")
    services = WorkerServices(settings, database, enqueuer, github_for=lambda installation: fuzz_world.client)
    assert execute_command(request, services).startswith("fuzz run")
    (run_id, queue), = enqueuer.runs
    with database.session() as session:
        run = session.get(Run, run_id)
    assert (run.kind, run.trigger, run.issue) == ("fuzz", "comment:fuzz", 9)
    params = run.params
    assert params["fuzz-seed"] == "2" and params["trigger"] == "comment"
    ctx, finished, state = fuzz_world.run({**params, **QUICK}, fix_command=FIX_SOFTPLUS)
    assert finished.status == "succeeded", ctx.lines
    _two_verified_commits(fuzz_world.project.bare, state, "scrub/fuzz-2")


def test_scrub_fuzz_comment_by_a_stranger_or_without_a_seed_starts_nothing(
        fuzz_world, database, settings, enqueuer):  # noqa: F811
    services = WorkerServices(settings, database, enqueuer, github_for=lambda installation: fuzz_world.client)
    fuzz_world.github.add_collaborator(fuzz_world.project.repo, "maintainer")
    base = dict(command="fuzz", repo=fuzz_world.project.repo, issue=9, user="maintainer")
    assert execute_command(CommandRequest(**base, args="soon"), services).startswith("usage: /scrub fuzz <seed>")
    assert execute_command(CommandRequest(**{**base, "user": "stranger"}, args="2"), services).startswith("refused")
    assert enqueuer.runs == []


def test_cli_with_a_fuzzed_program_commits_test_and_fix_on_a_local_branch(fuzz_world, tmp_path, monkeypatch):
    program = tmp_path / "fuzzed.py"
    program.write_text(FUZZER.split('MISMATCH = """')[1].split('"""')[0])
    monkeypatch.setenv("SCRUB_FIX_COMMAND", FIX_SOFTPLUS)
    monkeypatch.setenv("SCRUB_DATA_DIR", str(tmp_path / "cli-data"))
    from app.settings import reset_settings_cache

    reset_settings_cache()
    bare = fuzz_world.project.bare
    result = CliRunner().invoke(app, ["fuzz", str(program), "--repo", str(bare), "--json"])
    assert result.exit_code == 0, result.output
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["report_status"] == "Success", outcome["report"]
    assert outcome["failing_devices"] == ["accel"] and outcome["fix"]["verified"]
    branch = outcome["branch"]
    assert branch.startswith("scrub/fuzz-program-")
    assert remote_branch_tip(bare, branch) == outcome["commits"][1]


def test_cli_refuses_bad_input_with_a_clear_error(tmp_path):
    result = CliRunner().invoke(app, ["fuzz", "--repo", str(tmp_path)])
    assert result.exit_code == 2 and "exactly one of --seed N or PROGRAM.py" in " ".join(result.output.split())
    result = CliRunner().invoke(app, ["fuzz", "--seed", "3", "--repo", str(tmp_path)])
    assert result.exit_code == 2 and "not a git repository" in " ".join(result.output.split())
