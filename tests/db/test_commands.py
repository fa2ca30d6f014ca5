"""`apply_command` applies the action it is given to the runs of the kind it names; it knows no words."""

from __future__ import annotations

from app import approvals
from app.db import commands, queries
from app.db.models import Run
from app.domain import ActOnLatest, CommandRequest, CreateRun, Lifecycle, NewRun, Refuse, RerunFrom

REQUEST = CommandRequest(command="anything", repo="o/r", issue=1, user="maintainer", installation_id=3,
                         issue_url="https://github.com/o/r/issues/1")


def new_run(database, kind: str, status: str) -> Run:
    with database.session() as session:
        run = queries.create_run(session, kind=kind, repo="o/r", issue=1, status=status)
        session.commit()
        return run


def apply(database, action):
    with database.session() as session:
        outcome = commands.apply_command(session, REQUEST, action)
        session.commit()
    return outcome


def load(database, run_id) -> Run:
    with database.session() as session:
        return session.get(Run, run_id)


def test_a_lifecycle_action_acts_on_the_latest_run_of_its_kind_only(database):
    issue_run = new_run(database, "issue", "succeeded")
    fuzz_run = new_run(database, "fuzz", "running")
    outcome = apply(database, ActOnLatest(Lifecycle.cancel, "fuzz"))
    assert outcome.message == f"run {fuzz_run.id} cancelled by maintainer" and outcome.changed
    assert load(database, fuzz_run.id).status == "cancelled" and load(database, issue_run.id).status == "succeeded"
    assert apply(database, ActOnLatest(Lifecycle.approve, "fuzz")).message == "no run is awaiting approval"
    assert apply(database, ActOnLatest(Lifecycle.cancel, "selftest")).run_id is None


def test_a_new_run_takes_the_kind_params_and_reply_it_is_given(database):
    new = NewRun(kind="selftest", target="t", trigger="comment:x", params={"a": 1}, started="made {id}")
    outcome = apply(database, CreateRun(new))
    run = load(database, outcome.run_id)
    assert (run.kind, run.target, run.trigger, run.params, run.installation_id) == ("selftest", "t", "comment:x",
                                                                                   {"a": 1}, 3)
    assert outcome.message == f"made {run.id}" and outcome.enqueue_on == "default"


def test_a_rerun_with_no_run_yet_creates_the_fallback_and_a_refusal_changes_nothing(database):
    fallback = NewRun(kind="issue", target="u", trigger="comment:bisect", params={"force_bisect": True})
    outcome = apply(database, RerunFrom("issue", "bisect", "force_bisect", ("fetch", "bisect"), fallback))
    assert load(database, outcome.run_id).params == {"force_bisect": True}
    before = apply(database, Refuse("usage: no"))
    assert (before.message, before.run_id, before.enqueue_on) == ("usage: no", None, None)


def waiting_with_code(database, digest: str | None) -> Run:
    """A run whose `review` waits, showing code of `digest` (as the issue pipeline records it)."""
    from app.db.models import StageEvent

    run = new_run(database, "issue", "awaiting_approval")
    with database.session() as session:
        output = {approvals.OUTPUT_KEY: digest} if digest else {}
        session.add(StageEvent(run_id=run.id, stage="review", status="waiting", summary="awaiting approval", output=output))
        session.commit()
    return run


def test_an_approval_records_the_digest_of_the_code_that_waits(database):
    run = waiting_with_code(database, "a" * 64)
    outcome = apply(database, ActOnLatest(Lifecycle.approve, "issue"))  # `/scrub approve`
    assert outcome.enqueue_on == "default"
    assert load(database, run.id).params == {approvals.BY: "maintainer", approvals.DIGEST: "a" * 64}
    assert approvals.approved(load(database, run.id).params, "a" * 64)
    assert not approvals.approved(load(database, run.id).params, "b" * 64)


def test_an_approval_of_code_the_page_no_longer_shows_changes_nothing(database):
    """The status page sends the digest it showed: a run retried since, waiting with other
    code, is not approved by a click on the old page."""
    run = waiting_with_code(database, "b" * 64)
    with database.session() as session:
        stale = commands.approve(session, session.get(Run, run.id), "wanda", seen="a" * 64)
        session.commit()
    assert stale.enqueue_on is None and not stale.changed and "reload" in stale.message
    assert load(database, run.id).status == "awaiting_approval" and approvals.BY not in load(database, run.id).params
    with database.session() as session:
        fresh = commands.approve(session, session.get(Run, run.id), "wanda", seen="b" * 64)
        session.commit()
    assert fresh.enqueue_on == "default" and load(database, run.id).params[approvals.DIGEST] == "b" * 64


def test_an_approval_of_a_gate_that_shows_no_code_approves_the_run(database):
    run = waiting_with_code(database, None)  # e.g. the self-test's gate
    apply(database, ActOnLatest(Lifecycle.approve, "issue"))
    assert load(database, run.id).params == {approvals.BY: "maintainer"}
