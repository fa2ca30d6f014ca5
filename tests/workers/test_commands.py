"""`/scrub` commands: parsing, the permission check, and what each does to the latest run."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from app.db import queries
from app.db.context import DbRunContext
from app.db.models import Run
from app.db import commands
from app.domain import Command, CommandRequest, parse_command
from app.github.port import GitHubAPIError
from app.pipelines.commands import help_text
from workers.execute import WorkerServices, execute_command

REPO, ISSUE = "o/r", 5
# The issue pipeline's stages as these tests expect them (checked against the pipeline below).
ISSUE_STAGES = ["fetch", "select", "triage", "review", "reproduce", "bisect", "culprit_range", "culprit_commits",
                "minimize", "stress", "diagnose", "test", "place_test", "culprit_pr", "open_test_pr", "publish", "report"]
HELP_TEXT = help_text()


@dataclass
class FakeGitHub:
    """A public repository: its collaborators have these roles, anyone else reads it."""

    roles: dict[str, str] = field(default_factory=lambda: {"maintainer": "write", "reed": "read", "tess": "triage"})
    comments: list[tuple[str, int, str]] = field(default_factory=list)
    permission_error: Exception | None = None  # raised by `permission` (and `is_collaborator`)
    comment_error: Exception | None = None  # raised by `create_comment`
    asked: list[str] = field(default_factory=list)

    def is_collaborator(self, repo: str, username: str) -> bool:
        if self.permission_error:
            raise self.permission_error
        return username in self.roles  # read-only collaborators too

    def permission(self, repo: str, username: str) -> str:
        self.asked.append(username)
        if self.permission_error:
            raise self.permission_error
        return self.roles.get(username, "read")

    def create_comment(self, repo: str, number: int, body: str) -> dict:
        if self.comment_error:
            raise self.comment_error
        self.comments.append((repo, number, body))
        return {"id": len(self.comments)}


@pytest.fixture
def github():
    return FakeGitHub()


@pytest.fixture
def services(database, settings, enqueuer, github):
    return WorkerServices(settings, database, enqueuer, github_for=lambda installation: github)


def request(command: str, user: str = "maintainer") -> CommandRequest:
    return CommandRequest(command=command, repo=REPO, issue=ISSUE, user=user, installation_id=1, issue_url=f"https://github.com/{REPO}/issues/{ISSUE}")


def issue_run(database, settings, status: str, done: list[str] = ()) -> Run:
    with database.session() as session:
        run = queries.create_run(session, kind="issue", repo=REPO, issue=ISSUE, status=status, verdict="old")
        session.commit()
    ctx = DbRunContext(database, run, settings)
    for stage in done:
        ctx.stage_started(stage)
        ctx.stage_finished(stage, "done", "", {stage: 1})
    return run


def stored(database, run_id: int):
    with database.session() as session:
        return queries.run_detail(session, run_id)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("/scrub approve", Command("approve")),
        ("  /scrub RETRY now\nmore text", Command("retry")),
        ("/scrub bisect", Command("bisect")),
        ("/scrub minimize", Command("minimize")),
        ("/scrub", Command("")),
        ("/scrub dance", Command("dance")),  # passed on as typed: the worker answers it with the help
        ("/scrub " + "x" * 5000, Command("x" * 40)),  # bounded: it is echoed into the queue and the reply
        ("/scrubs approve", None),
        ("please /scrub approve", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_command(body, expected):
    assert parse_command(body) == expected


def unchanged(database, run: Run, enqueuer) -> bool:
    detail = stored(database, run.id)
    return (detail.run.status, detail.run.params.get("approved_by"), enqueuer.runs) == (run.status, None, [])


@pytest.mark.parametrize("user", ["reed", "tess", "stranger"])  # read, triage, no role of their own
def test_approve_needs_write_permission_not_being_a_collaborator(services, database, settings, github, enqueuer, user):
    run = issue_run(database, settings, "awaiting_approval", done=["fetch"])
    answer = execute_command(request("approve", user), services)
    assert answer.startswith("refused") and user in answer
    assert unchanged(database, run, enqueuer)
    [(repo, issue, reply)] = github.comments
    assert (repo, issue) == (REPO, ISSUE)
    assert f"@{user}" in reply and "`/scrub approve`" in reply and "write" in reply
    assert f"`{github.roles.get(user, 'read')}`" in reply and "Nothing was changed" in reply


@pytest.mark.parametrize(("command", "status"), [("retry", "failed"), ("bisect", "succeeded"),
                                                 ("minimize", "succeeded"), ("fuzz", "succeeded")])
def test_every_command_that_runs_code_or_changes_a_run_needs_write(services, database, settings, github, enqueuer,
                                                                    command, status):
    run = issue_run(database, settings, status, done=ISSUE_STAGES)
    answer = execute_command(CommandRequest(command, REPO, ISSUE, "reed", 1, "", "7"), services)
    assert answer.startswith("refused")
    assert unchanged(database, run, enqueuer) and len(stored(database, run.id).stages) == len(ISSUE_STAGES)
    with database.session() as session:
        assert len(queries.list_runs(session)) == 1  # no fuzz run, no new issue run
    assert len(github.comments) == 1 and f"`/scrub {command}`" in github.comments[0][2]


def test_a_custom_role_or_an_empty_answer_is_no_permission(services, database, settings, github, enqueuer):
    run = issue_run(database, settings, "awaiting_approval")
    github.roles |= {"custom": "security-reviewer", "blank": ""}
    for user in ("custom", "blank"):
        assert execute_command(request("approve", user), services).startswith("refused")
    assert unchanged(database, run, enqueuer)


@pytest.mark.parametrize("role", ["write", "maintain", "admin"])
def test_write_maintain_and_admin_may_approve(services, database, settings, github, enqueuer, role):
    github.roles["boss"] = role
    run = issue_run(database, settings, "awaiting_approval", done=["fetch"])
    assert execute_command(request("approve", "boss"), services) == f"run {run.id} approved by boss"
    assert stored(database, run.id).run.params["approved_by"] == "boss" and enqueuer.runs == [(run.id, "default")]
    assert github.comments == [] and github.asked == ["boss"]


@pytest.mark.parametrize("error", [GitHubAPIError(403, "Resource not accessible by integration"),
                                   GitHubAPIError(502, "Bad Gateway"), GitHubAPIError(0, "no answer"),
                                   RuntimeError("the client broke")])
def test_when_github_cannot_say_the_command_is_refused_not_dropped(services, database, settings, github, enqueuer,
                                                                    error):
    run = issue_run(database, settings, "awaiting_approval")
    github.permission_error = error
    answer = execute_command(request("approve"), services)  # the maintainer, but GitHub cannot confirm it
    assert answer.startswith("refused") and "could not" in answer
    assert unchanged(database, run, enqueuer)
    [(_, _, reply)] = github.comments
    assert "@maintainer" in reply and "could not check" in reply and "Nothing was changed" in reply


def test_a_refusal_whose_reply_fails_is_still_a_refusal(services, database, settings, github, enqueuer):
    run = issue_run(database, settings, "awaiting_approval")
    github.comment_error = GitHubAPIError(500, "Server Error")
    assert execute_command(request("approve", "reed"), services).startswith("refused")
    assert unchanged(database, run, enqueuer)


@pytest.mark.parametrize("word", ["help", "dance", ""])
def test_unknown_subcommand_gets_the_help_reply(services, github, word):
    assert execute_command(request(word), services) == "help sent"
    assert github.comments == [(REPO, ISSUE, HELP_TEXT)]


def test_help_is_for_collaborators_whatever_their_role(services, github):
    """`help` changes nothing: it keeps the collaborator check it always had."""
    assert execute_command(request("help", "reed"), services) == "help sent"
    assert execute_command(request("help", "stranger"), services).startswith("ignored")
    github.permission_error = GitHubAPIError(502, "Bad Gateway")
    assert execute_command(request("help", "tess"), services).startswith("ignored")
    assert github.comments == [(REPO, ISSUE, HELP_TEXT)]


def test_approve_requeues_the_waiting_run(services, database, settings, enqueuer):
    run = issue_run(database, settings, "awaiting_approval", done=["fetch"])
    execute_command(request("approve"), services)
    detail = stored(database, run.id)
    assert detail.run.status == "queued" and detail.run.params["approved_by"] == "maintainer"
    assert [e.stage for e in detail.stages] == ["fetch"]
    assert enqueuer.runs == [(run.id, "default")]


def test_approve_without_a_waiting_run_does_nothing(services, database, settings, enqueuer):
    issue_run(database, settings, "succeeded")
    assert execute_command(request("approve"), services) == "no run is awaiting approval"
    assert enqueuer.runs == []


def test_retry_restarts_the_latest_run_under_the_same_id(services, database, settings, enqueuer):
    run = issue_run(database, settings, "failed", done=["fetch", "reproduce"])
    execute_command(request("retry"), services)
    detail = stored(database, run.id)
    assert (detail.run.status, detail.run.verdict, detail.stages) == ("queued", None, [])
    assert enqueuer.runs == [(run.id, "default")]


def test_retry_leaves_a_run_in_progress_alone(services, database, settings, enqueuer):
    run = issue_run(database, settings, "running", done=["fetch"])
    assert "already in progress" in execute_command(request("retry"), services)
    assert len(stored(database, run.id).stages) == 1 and enqueuer.runs == []


def test_retry_without_a_run_starts_one(services, database, enqueuer):
    execute_command(request("retry"), services)
    [(run_id, queue)] = enqueuer.runs
    run = stored(database, run_id).run
    assert (run.kind, run.repo, run.issue, run.trigger) == ("issue", REPO, ISSUE, "comment:retry")


@pytest.mark.parametrize(("command", "flag", "kept"), [("bisect", "force_bisect", ISSUE_STAGES[:5]),
                                                      ("minimize", "force_minimize", ISSUE_STAGES[:8]),
                                                      ("stress", "force_stress", ISSUE_STAGES[:9])])
def test_bisect_minimize_and_stress_redo_that_stage_and_what_follows(services, database, settings, enqueuer, command, flag, kept):
    run = issue_run(database, settings, "succeeded", done=ISSUE_STAGES)
    execute_command(request(command), services)
    detail = stored(database, run.id)
    assert [e.stage for e in detail.stages] == kept
    assert detail.run.params[flag] is True and detail.run.status == "queued"
    assert enqueuer.runs == [(run.id, "default")]


def test_the_issue_pipeline_has_the_stages_these_tests_expect():
    from app.pipelines.registry import stage_names

    assert stage_names("issue") == ISSUE_STAGES


def test_a_stage_the_run_kind_lacks_deletes_nothing(database, settings):
    run = issue_run(database, settings, "succeeded", done=ISSUE_STAGES)
    with database.session() as session:
        loaded = session.get(Run, run.id)
        outcome = commands.rerun_from(session, loaded, "bisect", ["fetch", "parse", "record"], "force_bisect")
        session.commit()
    assert "has no bisect stage" in outcome.message and outcome.enqueue_on is None
    assert [e.stage for e in stored(database, run.id).stages] == ISSUE_STAGES
