"""Classifying CI failures before a job opens: the rules of `app.engine.cilogs.classify`."""

from __future__ import annotations

from dataclasses import replace

from app.ci_history import Classification, Occurrence, SignatureHistory
from app.engine.cilogs.classify import (
    TrunkState,
    broken_trunk,
    classify,
    decide,
    same_repository,
    scope_of,
    unstable_reason,
)

REPO = "pytorch/pytorch"
JOB = "linux-jammy-py3.10-gcc11 / test (default, 2, 5, linux.4xlarge)"


def _trunk(run_id: int, sha: str = "b" * 40) -> Occurrence:
    return Occurrence("f" * 64, run_id, head_sha=sha, head_branch="main", event="push", head_repo=REPO,
                      classification=Classification(scope="trunk", same_repo=True))


def _pr(run_id: int, **flags) -> Occurrence:
    return Occurrence("f" * 64, run_id, head_sha="c" * 40, head_branch="fix", event="pull_request", head_repo=REPO,
                      classification=Classification(scope="pr", same_repo=True, **flags))


def _classify(history=SignatureHistory("f" * 64), **overrides) -> Classification:
    args = dict(event="pull_request", head_branch="fix", default_branch="main", head_repo=REPO, base_repo=REPO,
                job=JOB, workflow="pull", history=history, passed_on_rerun=False)
    return classify(**{**args, **overrides})


def test_scope_is_trunk_only_for_a_push_or_schedule_on_the_default_branch():
    assert scope_of("push", "main", "main") == "trunk" and scope_of("schedule", "main", "main") == "trunk"
    assert scope_of("pull_request", "main", "main") == "pr"  # a PR from a fork's `main`
    assert scope_of("pull_request_target", "x", "main") == "pr"
    assert scope_of("push", "ciflow/trunk/12345", "main") == "branch"
    assert scope_of("workflow_dispatch", "main", "main") == "branch"
    assert scope_of("push", "main", "") == "branch"  # no default branch named: not trunk


def test_a_head_repository_that_is_not_the_base_or_not_named_is_a_fork():
    assert same_repository("PyTorch/PyTorch", REPO)
    assert not same_repository("mallory/pytorch", REPO) and not same_repository("", REPO)
    c = _classify(head_repo="mallory/pytorch")
    assert c.label == "fork" and not c.same_repo
    assert "fork: the head repository is mallory/pytorch" in " ".join(c.evidence)


def test_unstable_by_the_job_name_or_an_open_unstable_issue_without_shard_numbers():
    assert unstable_reason("linux-focal / test (default, unstable)", "trunk", ())
    assert not unstable_reason("linux / test (unstable_cache_test)", "trunk", ())  # a word of another word
    title = "UNSTABLE pull / linux-jammy-py3.10-gcc11 / test (default, linux.4xlarge)"
    assert "open `unstable` issue" in unstable_reason(JOB, "pull", [title])
    assert not unstable_reason(JOB, "trunk", [title])  # another workflow's job
    assert not unstable_reason(JOB, "pull", ["UNSTABLE pull / linux-jammy-py3.10-gcc11 / build"])
    assert _classify(unstable_titles=[title]).label == "unstable"


def test_broken_trunk_when_the_signature_failed_at_the_merge_base_or_in_trunks_latest_runs():
    history = SignatureHistory("f" * 64, (_trunk(11, sha="a" * 40),))
    at_base, why = broken_trunk(history, TrunkState(merge_base="a" * 40, latest_runs=()))
    assert at_base is True and "merge base aaaaaaaaaaaa" in why
    latest, why = broken_trunk(history, TrunkState(merge_base="e" * 40, latest_runs=(13, 12, 11)))
    assert latest is True and "latest runs" in why
    fixed, _ = broken_trunk(history, TrunkState(merge_base="e" * 40, latest_runs=(15, 14, 13)))
    assert fixed is False  # trunk failed long ago and is green now: the PR's own failure
    unknown, why = broken_trunk(history, TrunkState(problem="GitHub did not answer"))
    assert unknown is None and "GitHub did not answer" in why
    never, why = broken_trunk(SignatureHistory("f" * 64), TrunkState())
    assert never is False and why == ""  # never failed on trunk: nothing to ask
    c = _classify(history, trunk=TrunkState(merge_base="a" * 40, latest_runs=()))
    assert c.label == "broken trunk" and c.broken_trunk is True


def test_flaky_when_a_later_attempt_passed_or_the_signature_is_known_flaky():
    assert _classify(passed_on_rerun=True).label == "flaky"
    known = SignatureHistory("f" * 64, flaky=True, flaky_evidence="failed in attempt 1 of run 5, passed in 2")
    c = _classify(known)
    assert c.flaky and "passed in 2" in " ".join(c.evidence)


def test_a_trunk_failure_opens_a_job_at_the_threshold_even_when_flaky():
    current = replace(_trunk(12), classification=replace(_trunk(12).classification, flaky=True))
    assert decide(current, SignatureHistory("f" * 64, (_trunk(11),)), 2).opens
    assert not decide(_trunk(11), SignatureHistory("f" * 64), 2).opens
    assert decide(_trunk(11), SignatureHistory("f" * 64), 1).opens
    # The same run's second attempt is not a second run.
    again = replace(_trunk(11), attempt=2)
    assert not decide(again, SignatureHistory("f" * 64, (_trunk(11),)), 2).opens


def test_a_pr_failure_opens_a_job_only_when_repeated_and_neither_broken_trunk_nor_flaky_nor_fork():
    history = SignatureHistory("f" * 64, (_pr(21),))
    assert decide(_pr(22), history, 2).opens
    assert "broken trunk" in decide(_pr(22, broken_trunk=True), history, 2).reason
    assert not decide(_pr(22, broken_trunk=None), history, 2).opens
    assert "flaky" in decide(_pr(22, flaky=True), history, 2).reason
    assert not decide(_pr(22), replace(history, flaky=True), 2).opens
    assert not decide(_pr(22, unstable=True), history, 2).opens
    fork = replace(_pr(22), classification=Classification(scope="pr", same_repo=False))
    assert "fork" in decide(fork, history, 2).reason
    # Earlier runs that were flaky, broken trunk or a fork's do not count toward the repeat.
    noisy = SignatureHistory("f" * 64, (_pr(21, flaky=True), _pr(23, broken_trunk=True), replace(_pr(24), passed_on_rerun=True),
                                         replace(_pr(25), classification=Classification(scope="pr", same_repo=False))))
    decision = decide(_pr(22), noisy, 2)
    assert not decision.opens and decision.count == 1
    # Trunk failures do not make a PR failure "repeated" (they make it broken trunk).
    assert not decide(_pr(22), SignatureHistory("f" * 64, (_trunk(11),)), 2).opens
