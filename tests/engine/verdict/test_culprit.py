"""Naming the change: PRs from commits, and the culprit line for people."""

from __future__ import annotations

from app.engine.verdict import bisect as bisection
from app.engine.verdict.bisect_probe import UNKNOWN, ProbeAnswer
from app.engine.verdict.culprit import (
    COMMIT, NIGHTLY, RELEASE, Commit, Culprit, Level, describe, evidence, pull_of_commit, pulls_in_message,
)

# The shape PyTorch's merge bot lands a PR in (trimmed from a real commit of pytorch/pytorch).
MERGED = """[SDPA] Add an optional scale kwarg (#95259)

Summary: adds `scale` to scaled_dot_product_attention.

Pull Request resolved: https://github.com/pytorch/pytorch/pull/95259
Approved by: https://github.com/cpuhrsch
"""
REVERT = """Revert "[SDPA] Add an optional scale kwarg (#95259)"

This reverts commit 0123456789abcdef0123456789abcdef01234567.

Reverted https://github.com/pytorch/pytorch/pull/95259 on behalf of https://github.com/someone due to breaking CI
"""
NIGHTLIES = ["2.13.0", "nightly 2026-03-03", "nightly 2026-03-04", "nightly 2026-03-05", "2.14.0"]


def test_the_pr_a_commit_message_says_it_landed():
    assert pulls_in_message(MERGED, "pytorch/pytorch") == [95259]
    other = "Bump the vision pin\n\nPull Request resolved: https://github.com/pytorch/vision/pull/5\n"
    assert pulls_in_message(other, "pytorch/pytorch") == []  # another repository's PR is not this one's
    assert pulls_in_message("Fix the docs (#12)", "o/r") == [12]  # a squash merge's title
    assert pulls_in_message(REVERT, "pytorch/pytorch") == []  # a revert names the PR it undoes, not its own


def test_the_merged_pr_github_associates_wins_then_the_message():
    sha = "a" * 40
    merged = {"number": 7, "merged_at": "2026-03-04T10:00:00Z", "merge_commit_sha": sha}
    other = {"number": 8, "merged_at": "2026-03-01T10:00:00Z", "merge_commit_sha": "b" * 40}
    opened = {"number": 9, "merged_at": None}
    assert pull_of_commit(sha, [other, merged], MERGED, "pytorch/pytorch") == 7
    assert pull_of_commit(sha, [opened], MERGED, "pytorch/pytorch") == 95259  # the merge bot closes PRs unmerged
    assert pull_of_commit(sha, [other], "no reference", "pytorch/pytorch") == 8
    assert pull_of_commit(sha, [opened], "no reference", "pytorch/pytorch") is None


def nightly_level(answers: dict[str, object], known: dict[str, bool]) -> Level:
    found = bisection.bisect(NIGHTLIES, lambda label: answers[label], known=known)
    return Level(NIGHTLY, found, wall_s=12.0)


def test_regressed_in_the_pr_with_the_nightlies_around_it():
    level = nightly_level({"nightly 2026-03-03": False, "nightly 2026-03-04": True, "nightly 2026-03-05": True},
                          {"2.13.0": False, "2.14.0": True})
    culprit = Culprit("regressed", COMMIT, "c1", "c1", True, "pytorch/pytorch", commit=Commit("c" * 40, "t", 1234),
                      levels=[level])
    assert describe(culprit, "pytorch/pytorch") == "regressed in #1234 (nightly 2026-03-03 passes, 2026-03-04 fails)"
    assert describe(culprit, "pytorch/vision") == \
        "regressed in pytorch/pytorch#1234 (nightly 2026-03-03 passes, 2026-03-04 fails)"


def test_fixed_by_the_pr():
    level = nightly_level({"nightly 2026-03-03": True, "nightly 2026-03-04": True, "nightly 2026-03-05": False},
                          {"2.13.0": True, "2.14.0": False})
    culprit = Culprit("fixed", COMMIT, "c", "c", True, "pytorch/pytorch", commit=Commit("d" * 40, "t", 77),
                      levels=[level])
    assert describe(culprit, "pytorch/pytorch") == "fixed by #77 (nightly 2026-03-04 fails, 2026-03-05 passes)"


def test_an_untested_nightly_is_named_and_the_candidates_are_listed():
    answers = {"nightly 2026-03-03": False, "nightly 2026-03-04": ProbeAnswer(UNKNOWN, 0, "could not be installed"),
               "nightly 2026-03-05": True}
    level = nightly_level(answers, {"2.13.0": False, "2.14.0": True})
    assert not level.result.certain
    culprit = Culprit("regressed", COMMIT, "a", "b", False, "pytorch/pytorch", levels=[level],
                      candidates=[Commit("1" * 40, "x", 11), Commit("2" * 40, "y", None), Commit("3" * 40, "z", 13)])
    assert describe(culprit, "pytorch/pytorch") == ("regressed in one of #11, #13 and 1 more commits (nightly "
                                                    "2026-03-03 passes, 2026-03-05 fails; 2026-03-04 could not be tested)")
    lines = evidence(culprit)
    assert "- nightly 2026-03-04: could not be tested (could not be installed)" in lines
    assert "- 2.13.0: passes (known)" in lines


def test_a_range_with_only_a_commit_count():
    level = nightly_level({"nightly 2026-03-03": False, "nightly 2026-03-04": True, "nightly 2026-03-05": True},
                          {"2.13.0": False, "2.14.0": True})
    culprit = Culprit("regressed", NIGHTLY, "nightly 2026-03-03", "nightly 2026-03-04", True, "pytorch/pytorch",
                      commits_in_range=42, levels=[level])
    assert describe(culprit, "pytorch/pytorch") == \
        "regressed in one of 42 commits (nightly 2026-03-03 passes, 2026-03-04 fails)"


def test_without_nightlies_it_says_between_the_releases():
    culprit = Culprit("fixed", RELEASE, "2.13.0", "2.14.0", True, "pytorch/pytorch", note="no index")
    assert describe(culprit, "pytorch/pytorch") == "fixed between 2.13.0 and 2.14.0"


def test_a_culprit_round_trips_through_json():
    level = nightly_level({"nightly 2026-03-03": False, "nightly 2026-03-04": True, "nightly 2026-03-05": True},
                          {"2.13.0": False, "2.14.0": True})
    culprit = Culprit("regressed", COMMIT, "a", "b", False, "pytorch/pytorch", untested=["x"],
                      commit=Commit("c" * 40, "t", 5), candidates=[Commit("1" * 40, "x", 11)], commits_in_range=3,
                      note="n", levels=[level])
    again = Culprit.from_dict(culprit.to_dict())
    assert again == culprit and again.probes == level.probes == 3 and again.wall_s == 12.0
