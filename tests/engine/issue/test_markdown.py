"""Markdown -> code blocks -> repro candidates -> the chosen repro; reported errors; triage."""

from __future__ import annotations

import pytest

from app.engine.issue.markdown import (
    CodeBlock, ReportedError, Repro, Triage, code_blocks, is_python_block, is_self_contained, repro_candidates,
    reported_error, select_repro, triage,
)

FENCE = "```"


def post(login: str, body: str, when: str, url: str = "", **extra) -> dict:
    return {"user": {"login": login, "type": "User"}, "body": body, "created_at": when,
            "html_url": url or f"https://github.com/o/r/issues/1#{login}-{when}", **extra}


def py(code: str, lang: str = "python") -> str:
    return f"{FENCE}{lang}\n{code}\n{FENCE}"


# -- code blocks --------------------------------------------------------------------------


def test_code_blocks_reads_backtick_tilde_and_indented_blocks_in_order():
    md = "text\n\n```py\na = 1\n```\n\n~~~\nb = 2\n~~~\n\n    c = 3\n    d = 4\n\nafter"
    assert code_blocks(md) == [CodeBlock("a = 1", "py"), CodeBlock("b = 2", ""), CodeBlock("c = 3\nd = 4", "")]


def test_a_longer_fence_contains_a_shorter_one_and_keeps_indentation():
    md = "````python\ndef f():\n    return '```'\n```\n````"
    assert code_blocks(md) == [CodeBlock("def f():\n    return '```'\n```", "python")]


def test_an_indented_list_continuation_is_not_a_code_block():
    assert code_blocks("- item\n    continued text") == []


@pytest.mark.parametrize("block, expected", [
    (CodeBlock("import torch\nx = torch.ones(2)", "python"), True),
    (CodeBlock("x = f(1)\nprint(x)", ""), True),
    (CodeBlock("Traceback (most recent call last):\n  File 'a.py'\nValueError: x", ""), False),
    (CodeBlock("pip install torch", "bash"), False),
    (CodeBlock("tensor([1., 2.])", ""), False),  # printed output parses, but is a lone value
    (CodeBlock(">>> x = 1", ""), False),
    (CodeBlock("x = 1", "text"), False),
    (CodeBlock("def f(:", "python"), False),
])
def test_which_blocks_are_python(block, expected):
    assert is_python_block(block) is expected


def test_self_contained_means_every_name_read_is_defined_imported_or_builtin():
    assert is_self_contained("import torch as t\ndef f(x):\n    return t.ones(x)\nprint(f(2), len([]))")
    assert not is_self_contained("out = model(x)")  # `model` and `x` come from elsewhere


# -- candidates and the selection rule -------------------------------------------------------

LONG = "import torch\n" + "\n".join(f"a{i} = torch.ones({i})" for i in range(6)) + "\nraise RuntimeError('x')"
SHORT = "import torch\nraise RuntimeError('x')"


def test_the_latest_repro_by_the_original_poster_wins_over_earlier_ones():
    issue = post("op", py(LONG), "2024-01-01T00:00:00Z")
    comments = [post("op", "update:\n" + py(LONG + "\nprint(1)"), "2024-01-03T00:00:00Z"),
                post("other", "same here", "2024-01-02T00:00:00Z")]
    chosen = select_repro(repro_candidates(issue, comments))
    assert chosen.author == "op" and chosen.url == comments[0]["html_url"]


def test_a_strictly_shorter_self_contained_repro_by_a_triager_is_preferred():
    issue = post("op", py(LONG), "2024-01-01T00:00:00Z")
    comments = [post("helper", "smaller:\n" + py(SHORT), "2024-01-02T00:00:00Z")]
    chosen = select_repro(repro_candidates(issue, comments), trusted={"helper"})
    assert (chosen.author, chosen.by_original_poster, chosen.trusted) == ("helper", False, True)


def test_a_strangers_shorter_repro_does_not_replace_the_posters():
    # pytorch issue #21 item 3: being shorter is no reason to run a stranger's code instead
    issue = post("op", py(LONG), "2024-01-01T00:00:00Z")
    comments = [post("stranger", "smaller:\n" + py(SHORT), "2024-01-02T00:00:00Z")]
    chosen = select_repro(repro_candidates(issue, comments))
    assert (chosen.author, chosen.trusted) == ("op", True)


def test_a_shorter_commenter_snippet_that_needs_context_is_not_preferred():
    issue = post("op", py(LONG), "2024-01-01T00:00:00Z")
    comments = [post("helper", py("y = model(x)\nraise RuntimeError('x')"), "2024-01-02T00:00:00Z")]
    assert select_repro(repro_candidates(issue, comments)).author == "op"


def test_bots_and_scrubbots_own_comments_are_not_candidates():
    issue = post("op", "no code here", "2024-01-01T00:00:00Z")
    comments = [post("scrubbot", py(SHORT) + "\n<!-- scrubbot:run=3:issue -->", "2024-01-02T00:00:00Z"),
                {**post("ci-bot", py(SHORT), "2024-01-02T00:00:00Z"), "user": {"login": "ci-bot", "type": "Bot"}}]
    assert repro_candidates(issue, comments) == []


def test_every_python_block_of_a_post_is_a_candidate_and_the_longest_runs_first():
    body = py("import torch") + "\n\n" + py(LONG) + "\n\n" + py("Traceback (most recent call last):\nX: y", "")
    candidates = repro_candidates(post("op", body, "2024-01-01T00:00:00Z"), [])
    assert [c.source for c in candidates] == ["import torch\n", LONG + "\n"]
    assert [c.line for c in candidates] == [1, 5]
    assert select_repro(candidates).source == LONG + "\n"


def test_repro_round_trips_through_plain_data():
    repro = Repro("x = 1\n", "op", "u", "t", True)
    assert Repro.from_dict(repro.to_dict()) == repro


def test_a_repro_whose_cuda_part_was_dropped_says_so_only_then():
    repro = Repro("x = 1\ny = 2\n", "op", "u", "t", True)
    assert "cuda_dropped" not in repro.to_dict()  # the keys a stored repro always had
    dropped = Repro("x = 1\n", "op", "u", "t", True, cuda_dropped=True)
    assert dropped.to_dict()["cuda_dropped"] is True and dropped.to_dict()["lines"] == 1
    assert Repro.from_dict(dropped.to_dict()) == dropped
    stored = {"source": "x = 1\n", "author": "op", "url": "u", "created_at": "t", "by_original_poster": True,
              "lines": 7}  # fields with a default may be missing; `lines` is derived, not read
    assert Repro.from_dict(stored) == Repro("x = 1\n", "op", "u", "t", True)


# -- the reported error ---------------------------------------------------------------------


def test_the_last_exception_line_of_a_traceback_block_is_the_reported_error():
    text = ("It fails:\n```\nTraceback (most recent call last):\n  File \"a.py\", line 1\n"
            "torch._dynamo.exc.Unsupported: call_function UserDefinedClassVariable\n```")
    error = reported_error(text)
    assert (error.exception, error.message) == ("torch._dynamo.exc.Unsupported", "call_function UserDefinedClassVariable")
    assert error.expect == "torch._dynamo.exc.Unsupported: call_function UserDefinedClassVariable"


def test_an_exception_named_in_prose_counts_when_there_is_no_traceback():
    assert reported_error("I get\nValueError: bad shape\nwhen running").expect == "ValueError: bad shape"


@pytest.mark.parametrize("text, kind", [
    ("Segmentation fault (core dumped)", "segfault"),
    ("the process segfaults", "segfault"),
    ("it hangs forever in backward", "hang"),
    ("DataLoader deadlock with 4 workers", "hang"),
])
def test_crashes_and_hangs_are_recognised(text, kind):
    assert reported_error(text).kind == kind


def test_the_first_text_that_names_an_error_wins_and_none_when_nothing_does():
    assert reported_error(None, "all good", "KeyError: 'a'").expect == "KeyError: 'a'"
    assert reported_error("works on my machine", "") is None


def test_an_exception_raised_in_the_repro_code_is_not_the_reported_error():
    assert reported_error(py("raise RuntimeError('from the code')")) is None


@pytest.mark.parametrize("error", [ReportedError("exception", "ValueError", "bad shape"), ReportedError("hang")])
def test_reported_error_round_trips_through_plain_data(error):
    data = error.to_dict()
    assert data["expect"] == error.expect  # what the verdict engine matches on
    assert ReportedError.from_dict(data) == error


# -- triage ---------------------------------------------------------------------------------

REPRO = Repro("import torch\nraise RuntimeError('x')\n", "op", "u", "t", True)


def issue(title="bug", body="", state="open", labels=()):
    return {"title": title, "body": body, "state": state, "labels": [{"name": n} for n in labels]}


@pytest.mark.parametrize("the_issue, repro, decision, labels", [
    (issue(state="closed"), REPRO, "closed", []),
    (issue(labels=["duplicate"]), REPRO, "duplicate", []),
    (issue("[Tracker] dynamo graph breaks"), None, "tracker", ["tracker"]),
    (issue(body="- [ ] #12 first\n- [x] https://github.com/o/r/issues/13 second"), None, "tracker", ["tracker"]),
    (issue("[Feature Request] add foo"), REPRO, "feature", ["feature"]),
    (issue(body="### 🚀 The feature, motivation and pitch\nplease"), None, "feature", ["feature"]),
    (issue("[BE] refactor the dispatcher"), None, "better-engineering", ["better-engineering"]),
    (issue(), None, "needs-reproduction", ["needs reproduction"]),
    (issue(labels=["needs reproduction"]), None, "needs-reproduction", []),  # never re-added
    (issue(), REPRO, "actionable", []),
])
def test_triage_decisions(the_issue, repro, decision, labels):
    result = triage(the_issue, repro)
    assert (result.decision, result.add_labels) == (decision, labels)
    assert result.stops is (decision != "actionable")


def test_triage_round_trips_through_plain_data():
    decision = triage(issue(labels=["needs reproduction"]), REPRO)
    assert decision.remove_labels == ["needs reproduction"]
    assert Triage.from_dict(decision.to_dict()) == decision
    every_field = Triage("actionable", "cpu part", add_labels=["a"], remove_labels=["b"], needs_cuda=True,
                         cpu_source="x = 1")
    assert Triage.from_dict(every_field.to_dict()) == every_field


def test_images_without_code_are_screenshot_only():
    assert triage(issue(), None, images=True).decision == "screenshot-only"


def test_a_valid_repro_removes_needs_reproduction():
    assert triage(issue(labels=["needs reproduction"]), REPRO).remove_labels == ["needs reproduction"]


@pytest.mark.parametrize("source, decision, cuda", [
    ("import torch\nx = torch.ones(2).cuda()\n", "actionable", True),
    ("import torch\nx = torch.ones(2, device='cuda')\n", "actionable", True),
    ("import torch_xla.core.xla_model as xm\nd = xm.xla_device()\n", "unavailable-hardware", False),
    ("import torch\nx = torch.ones(2, device='cuda:1')\n", "unavailable-hardware", False),
    ("import torch\nif torch.cuda.is_available():\n    pass\n", "actionable", False),
])
def test_hardware_needs(source, decision, cuda):
    result = triage(issue(), Repro(source, "op", "u", "t", True))
    assert (result.decision, result.needs_cuda) == (decision, cuda)


def test_a_fragment_is_not_a_runnable_repro():
    fragment = Repro("out = model(x)\n", "op", "u", "t", True, self_contained=False)
    result = triage(issue(), fragment)
    assert result.decision == "needs-reproduction" and "model, x" in result.reason


def test_the_posters_latest_self_contained_repro_beats_a_later_fragment():
    issue_post = post("op", py(SHORT), "2024-01-01T00:00:00Z")
    later = post("op", "and then:\n" + py("y = model(x)\nprint(y)"), "2024-01-02T00:00:00Z")
    assert select_repro(repro_candidates(issue_post, [later])).url == issue_post["html_url"]


def test_star_imports_make_every_name_possible():
    assert is_self_contained("from torch import *\nx = ones(2)")
