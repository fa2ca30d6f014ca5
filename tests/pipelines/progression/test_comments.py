"""What a re-check writes: only changes of state, and for a fix the build and PR that fixed it."""

from __future__ import annotations

from app.engine.verdict import bisect as bisection
from app.engine.verdict.culprit import COMMIT, NIGHTLY, Commit, Culprit, Level
from app.pipelines.progression.comments import fixed_in, issue_comment, transition
from app.pipelines.progression.state import ProgressionState

LABELS = ["2.13.0", "nightly 2026-03-03", "nightly 2026-03-04", "nightly 2026-03-05", "nightly 2026-03-06"]


def test_only_a_change_of_state_is_worth_a_comment():
    assert transition("reproduces", "fixed") == "reproduces -> fixed"
    assert transition("reproduces", "passes-now") == "reproduces -> passes-now"
    assert transition("passes-now", "reproduces") == "passes-now -> reproduces"
    assert transition("passes-now", "fixed") == "passes-now -> fixed"
    for same in (("reproduces", "reproduces"), ("passes-now", "passes-now"), ("reproduces", "inconclusive"),
                 ("reproduces", "closed"), ("fixed", "fixed")):
        assert transition(*same) == ""


def fixed_between(first_fixed: str) -> Culprit:
    found = bisection.bisect(LABELS, lambda label: LABELS.index(label) < LABELS.index(first_fixed),
                             known={"2.13.0": True, "nightly 2026-03-06": False})
    return Culprit("fixed", COMMIT, "c", "c", True, "pytorch/pytorch", commit=Commit("c" * 40, "Fix (#2011)", 2011),
                   levels=[Level(NIGHTLY, found, wall_s=30.0)])


def test_fixed_in_is_the_first_nightly_without_the_bug_not_the_build_checked():
    assert fixed_in(fixed_between("nightly 2026-03-04"), "nightly 2026-03-06") == "nightly 2026-03-04"
    assert fixed_in(None, "nightly 2026-03-06") == "nightly 2026-03-06"


def test_the_fix_comment_names_the_build_and_the_pr_with_the_probes():
    state = ProgressionState(verdict="fixed", runs=14, culprit=fixed_between("nightly 2026-03-04"),
                             witness="on PyTorch 2.13.0 the same script still fails with the reported failure",
                             witness_holds=True)
    params = {"repo": "pytorch/pytorch", "reason": "new build nightly 2026-03-06",
              "build": {"label": "nightly 2026-03-06"}}
    body = issue_comment(params, state, closes=True)
    assert body.startswith("This issue no longer reproduces on PyTorch nightly 2026-03-06: fixed in nightly "
                           "2026-03-04 by #2011.")
    assert "Culprit: fixed by #2011 (nightly 2026-03-03 fails, 2026-03-04 passes)." in body
    assert "- nightly 2026-03-04: passes (1 run)" in body and "Closing it as fixed" in body
    other = issue_comment({**params, "repo": "pytorch/vision"}, state, closes=True)
    assert "by pytorch/pytorch#2011." in other  # a PR of another repository is named in full
