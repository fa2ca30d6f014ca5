"""What the issue pipeline says, from its typed state: the publish plan and the run report."""

from __future__ import annotations

from app.domain import StageSummary
from app.engine.issue.markdown import Triage
from app.pipelines.issue import KIND
from app.pipelines.issue.report import build_report, publish_plan
from app.pipelines.issue.state import IssueState, PublishPlan

PASSED = {"outcome": "passed", "exception": None, "message": None, "environment": "e4", "torch_version": "2.13.0",
          "output_tail": "sum 6\n"}
MISSING = {"outcome": "error", "exception": "ModuleNotFoundError", "message": "No module named 'not_installed_pkg'",
           "environment": "e4", "torch_version": "2.13.0", "output_tail": ""}


def stored(verdict: str, result: dict, **more) -> dict:
    """A run's state as the stages stored it (JSON), up to the report stage."""
    return {
        "issue": {"title": "bug", "html_url": "https://github.com/o/r/issues/3", "user": {"login": "op"}},
        "repro": {"source": "print(1)\n", "author": "op", "url": "https://github.com/o/r/issues/3",
                  "created_at": "t", "by_original_poster": True, "self_contained": True, "lines": 1,
                  "trusted": True, "where": "the issue body", "line": 3, "why": "the original poster's latest repro"},
        "triage": {"decision": "actionable", "reason": "a bug report with a repro", "add_labels": [],
                   "remove_labels": ["needs reproduction"], "needs_cuda": False, "cpu_source": None},
        "verdict": verdict,
        "reproduction": {"verdict": verdict, "flaky_ratio": None, "runs": 5, "reproduced": 0, "rate": 0.0,
                         "interval": [0.0, 0.4345], "outcomes": {result["outcome"]: 5}, "result": result,
                         "description": "it passes"},
        **({"witness": WITNESS} if verdict == "fixed" else {}),
        **more,
    }


WITNESS = {"kind": "older-release", "why": "on PyTorch e1 the same script fails", "environment": "e1",
           "observed": "RuntimeError: the bug"}


def test_a_closed_issue_gets_nothing_written():
    plan = publish_plan(IssueState(verdict="closed", triage=Triage("closed", "closed", add_labels=["x"])))
    assert plan == PublishPlan(nothing=True)


def test_a_fixed_issue_is_closed_with_the_triage_labels_and_where_it_was_fixed():
    bisect = {"first_changed": "e3", "last_unchanged": "e2", "oldest_outcome": True,
              "probes": {"e1": True, "e2": True, "e3": False, "e4": False}, "rounds": 2}
    plan = publish_plan(IssueState.load(stored("fixed", PASSED, bisect=bisect)))
    assert plan.close and plan.remove_labels == ["needs reproduction"] and plan.add_labels == []
    assert plan.comment.startswith("This issue no longer reproduces on PyTorch 2.13.0: this script demonstrated "
                                   "the bug and no longer does.")
    assert "Witness: on PyTorch e1 the same script fails with the reported failure (RuntimeError: the bug)." in plan.comment
    assert "It first stops reproducing in PyTorch e3 (it still reproduces in e2)." in plan.comment
    assert ("It is the block in the issue body at line 3, starting `print(1)`: the original poster's latest repro."
            in plan.comment)


def test_fixed_closes_only_with_a_witness_that_holds_and_a_trusted_repro():
    no_witness = stored("fixed", PASSED)
    del no_witness["witness"]
    assert not publish_plan(IssueState.load(no_witness)).close
    failed = stored("fixed", PASSED, witness=WITNESS | {"kind": "none"})
    assert not publish_plan(IssueState.load(failed)).close
    strangers = stored("fixed", PASSED)
    strangers["repro"] = strangers["repro"] | {"trusted": False, "author": "stranger"}
    assert not publish_plan(IssueState.load(strangers)).close


def test_passes_now_says_why_labels_and_never_closes():
    state = stored("passes-now", PASSED, witness={"kind": "none", "why": "no older release is provisioned"})
    plan = publish_plan(IssueState.load(state))
    assert not plan.close and plan.add_labels == ["passes now"]
    assert "no witness that this script ever showed the bug: no older release is provisioned" in plan.comment
    assert "no longer reproduces" not in plan.comment


def test_a_different_error_never_also_says_it_runs_to_completion():
    failing = {"outcome": "error", "exception": "TypeError", "message": "bad operand", "environment": "e4",
               "torch_version": "2.13.0", "output_tail": "TypeError: bad operand\n"}
    state = stored("different-error", failing, reported={"kind": "exception", "exception": "ValueError",
                                                         "message": "shapes"})
    state["reproduction"]["description"] = "TypeError: bad operand"
    comment = publish_plan(IssueState.load(state)).comment
    assert "runs to completion" not in comment and "no longer reproduces" not in comment
    assert "now fails with a different error" in comment and "TypeError: bad operand" in comment


def test_a_missing_package_is_named_from_the_run_that_showed_it():
    plan = publish_plan(IssueState.load(stored("missing-dependency", MISSING)))
    assert "`not_installed_pkg`" in plan.comment and not plan.close


class Ctx:
    """What `build_report` reads of a run context: params, done stages, stage events."""

    def __init__(self):
        self.params = {"repo": "o/r", "issue": 3}

    def completed_stages(self):
        return {name: {} for name in ("fetch", "select", "triage", "review", "reproduce")}

    def stage_summaries(self):
        return [StageSummary("reproduce", "done", "fixed on e4", 1.5)]


def test_the_report_shows_the_typed_parts_and_names_the_stages_that_did_not_finish():
    findings = [{"kind": "shell", "line": 2, "snippet": "os.system('id')", "detail": "runs a shell command"}]
    built = build_report(Ctx(), IssueState.load(stored("fixed", PASSED, findings=findings)), KIND.stage_names)
    assert built.headline == "verdict fixed" and built.publish.close
    assert "- line 2, shell: runs a shell command" in built.report
    assert "fixed: it passes on e4 (PyTorch 2.13.0), 0/5 runs reproduced." in built.report
    # the stages before report that are not done
    assert "bisect, culprit_range, culprit_commits, minimize" in built.report


def test_a_wrong_result_that_still_prints_shows_what_it_printed_and_the_stated_values():
    printed = PASSED | {"output_tail": "actual:\ntensor(0.)\nexpected:\ntensor(4.2484e-18)\n"}
    state = stored("reproduces", printed, stated_values={"actual": "tensor(0.)", "expected": "tensor(4.2484e-18)"})
    state["reproduction"]["reproduced"] = 5
    comment = publish_plan(IssueState.load(state)).comment
    assert comment.startswith("This issue still reproduces on PyTorch 2.13.0.")
    assert "Observed in 5 of 5 runs" in comment and "tensor(0.)\nexpected:\ntensor(4.2484e-18)" in comment
    assert "The issue states it prints 'tensor(0.)' where 'tensor(4.2484e-18)' is expected." in comment


def test_a_pass_on_another_platform_says_why_once():
    state = stored("inconclusive", PASSED)
    state["reproduction"] |= {"platform": "linux-aarch64", "description": "passed here, but the report is from linux-aarch64"}
    comment = publish_plan(IssueState.load(state)).comment
    assert comment.count("the report is from linux-aarch64") == 1


def test_a_run_stopped_at_an_input_the_thread_lacks_asks_for_it_and_labels_it():
    missing = {"outcome": "error", "exception": "FileNotFoundError", "message": "[Errno 2] No such file or directory: "
               "'bug.pt'", "environment": "e4", "torch_version": "2.13.0", "output_tail": ""}
    state = stored("needs-reproduction", missing)
    state["repro"]["source"] = "import torch\nb = torch.load('bug.pt')\n"
    plan = publish_plan(IssueState.load(state))
    assert "The repro reads `bug.pt`, which is not in this issue" in plan.comment
    assert plan.add_labels == ["needs reproduction"] and not plan.close
