"""Triage before anything runs: what is not a runnable bug report (the rest of the decisions are
exercised in test_markdown.py, where triage started)."""

from __future__ import annotations

from app.engine.issue.repro import Repro
from app.engine.issue.repro_facts import never_runs
from app.engine.issue.triage import triage

MODEL = """import torch
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv1d(1, 6, 5)

    def forward(self, x):
        x = F.relu(self.conv1(x))
"""


def repro(source: str) -> Repro:
    return Repro(source, "op", "u", "t", True)


def test_a_model_pasted_without_the_lines_that_use_it_needs_a_reproduction():
    # Real shape (#543): the script is cut inside forward(), before the input, loss and backward.
    decision = triage({"title": "Error when backprop Conv1d", "body": "", "state": "open"}, repro(MODEL))
    assert decision.decision == "needs-reproduction" and decision.add_labels == ["needs reproduction"]
    assert "only defines Net" in decision.reason


def test_code_that_calls_or_decorates_something_runs():
    assert never_runs(MODEL + "\nNet()(torch.ones(1, 1, 8))\n") == []
    assert never_runs("import torch\n\n@torch.jit.script\ndef f(x):\n    return x + 1\n") == []  # scripting runs at def
    assert never_runs("import torch\n") == []  # `import torch` alone is a repro (an import error)
    assert never_runs("import torch\nclass A:\n    w = torch.ones(2)\n") == []  # a class body runs
    assert never_runs("def f(x=print(1)):\n    pass\n") == []  # a default runs at def
    assert never_runs("def f(:\n") == []


def test_a_documentation_issue_is_routed_not_reproduced():
    # Real shape (#78243): the docs template, a link to a docs page, no code.
    body = "### 📚 The doc issue\n\nhttps://pytorch.org/docs/1.11/generated/torch.nn.LeakyReLU.html\n\nthe picture is wrong"
    decision = triage({"title": "I find that the picture has some errors?", "body": body, "state": "open"}, None)
    assert (decision.decision, decision.add_labels) == ("documentation", ["module: docs"])
    assert triage({"title": "[docs] typo in conv2d", "body": "", "state": "open"}, None).decision == "documentation"
    labelled = {"title": "wrong formula", "body": "", "state": "open", "labels": [{"name": "module: docs"}]}
    assert triage(labelled, None).decision == "documentation"
    assert triage(labelled, repro("import torch\ntorch.ones(1)\n")).decision == "actionable"  # a docs label on code: run it


def test_a_title_saying_the_docs_and_the_code_disagree_is_a_documentation_issue_even_with_code():
    # Real shapes (#85525, #54881): the script raises the check the docs now describe, or compares
    # signatures; running it shows what the code does, not which side is wrong.
    code = repro("import torch\ntorch.fake_quantize_per_channel_affine(torch.ones(2), torch.ones(2), torch.zeros(2).long(), 0, 0, 255)\n")
    for title in ("torch.fake_quantize_per_channel_affine : implementation and documentation mismatch",
                  "Often the documentation does not match the actual signature of the function",
                  "Inconsistency between docstring and behaviour of nn.Unfold",
                  "F.interpolate docs contradict what align_corners does"):
        assert triage({"title": title, "body": "", "state": "open"}, code).decision == "documentation", title
    for title in ("Shape mismatch in conv2d backward", "torch.cat inconsistent results on CPU",
                  "Documented example crashes with a segfault", "Size mismatch when loading a state dict"):
        assert triage({"title": title, "body": "", "state": "open"}, code).decision == "actionable", title


def test_a_triagers_duplicate_comment_stops_the_run_and_a_strangers_does_not():
    issue = {"title": "`nanmean`", "body": "", "state": "open"}
    said = [{"user": {"login": "maintainer"}, "body": "Dupplicate: #137780"}]
    decision = triage(issue, None, comments=said, trusted={"maintainer"})
    assert decision.decision == "duplicate" and "#137780" in decision.reason
    assert triage(issue, None, comments=said, trusted=set()).decision == "needs-reproduction"
    assert triage(issue, None, comments=said, trusted=None).decision == "duplicate"  # nobody to ask: the thread says so
    said = [{"user": {"login": "maintainer"}, "body": "Not a duplicate of #1, see the stack"}]
    assert triage(issue, None, comments=said, trusted={"maintainer"}).decision == "needs-reproduction"


def test_a_test_case_pasted_without_its_runner_runs_nothing_and_needs_a_reproduction():
    # It would "pass" without running a test, and its asserts made it look self-checking.
    source = ("import unittest\nimport torch\n\nclass TestBug(unittest.TestCase):\n    def test_it(self):\n"
              "        self.assertTrue(torch.ones(1).sum() == 2)\n")
    assert triage({"title": "wrong sum", "body": "", "state": "open"}, repro(source)).decision == "needs-reproduction"
    assert never_runs(source + "\nunittest.main()\n") == []
