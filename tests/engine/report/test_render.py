"""The issue comment's template, the run report's sections, and escaping of untrusted text."""

from __future__ import annotations

import re

import pytest

from app.engine.report.render import (
    IssueComment, Notice, RunReport, Section, StageLine, fence, inline_code, no_mentions,
    render_issue_comment, render_notice, render_run_report,
)


def test_first_line_is_exactly_the_seeds_sentence():
    assert render_issue_comment(IssueComment(True, "2.13.0")).splitlines()[0] == \
        "This issue still reproduces on PyTorch 2.13.0."
    assert render_issue_comment(IssueComment(False, "2.13.0")).splitlines()[0] == \
        "This issue no longer reproduces on PyTorch 2.13.0: this script demonstrated the bug and no longer does."


def test_a_bare_verdict_is_a_short_comment():
    assert render_issue_comment(IssueComment(True, "2.13.0")) == (
        "This issue still reproduces on PyTorch 2.13.0.\n\n(Analysis done by Scrubbot.)\n")


def test_only_what_is_set_is_said():
    text = render_issue_comment(IssueComment(
        True, "2.13.0", source_url="https://github.com/o/r/issues/1#issuecomment-5", source_author="bob",
        minimized="import torch\ntorch.ones(2) @ torch.ones(3)\n", flaky_ratio="3/5"))
    assert "Repro used: https://github.com/o/r/issues/1#issuecomment-5 (by bob)." in text
    assert "Minimized repro:\n\n```python\nimport torch\ntorch.ones(2) @ torch.ones(3)\n```" in text
    assert "3/5" in text
    assert "different error" not in text and "first stops" not in text


def test_fixed_version_and_different_error_are_reported():
    text = render_issue_comment(IssueComment(False, "2.13.0", fixed_in="2.12", last_broken="2.11"))
    assert "It first stops reproducing in PyTorch 2.12 (it still reproduces in 2.11)." in text
    text = render_issue_comment(IssueComment(False, "2.13.0", different_error="TypeError: x",
                                             reported_error="ValueError: y"))
    assert "```text\nTypeError: x\n```" in text and "```text\nValueError: y\n```" in text


def test_output_with_fences_cannot_break_out_of_its_block():
    evil = "ok\n```\n@everyone look ![x](http://e/x.png)\n````"
    block = fence(evil, "text")
    opening = block.splitlines()[0]
    assert opening == "`````text" and block.endswith("\n`````")
    assert block.count("`````") == 2  # only the fence itself is that long


def test_mentions_do_not_ping_and_markers_are_defused():
    text = no_mentions("thanks @alice and @bob-2, mail me at a@b.c <!-- scrubbot:run=1:issue -->")
    assert not re.search(r"(?<![\w`])@[A-Za-z0-9]", text.replace("@\u200b", ""))
    assert "a@b.c" in text  # an e-mail address is not a mention
    assert "<!-- scrubbot" not in text
    assert "<!-- scrubbot" not in fence("<!-- scrubbot:run=1:issue -->")


def test_inline_code_survives_backticks():
    assert inline_code("a `b` c") == "``a `b` c``"


def test_notices():
    assert "screenshot" in render_notice(Notice("screenshot-only"))
    assert "a TPU" in render_notice(Notice("unavailable-hardware", detail="a TPU"))
    approval = render_notice(Notice("awaiting-approval", source_url="https://x", findings=[
        {"line": 2, "kind": "shell", "detail": "os.system() runs a command", "snippet": "os.system('ls')"}]))
    assert "/scrub approve" in approval and "line 2, shell" in approval
    assert "someone with write access to this repository" in approval  # not "a collaborator": may only read
    clean = render_notice(Notice("awaiting-approval", source_url="https://x", findings=[]))
    assert "author does not have write access" in clean
    with pytest.raises(ValueError):
        render_notice(Notice("nonsense"))


def test_run_report_has_the_seeds_sections_in_order():
    text = render_run_report(RunReport(
        title="Scrub of o/r#1", status="Partial", summary="flaky @alice", pr_url=None,
        test_created="test/test_x.py", changes=["added a test"],
        stages=[StageLine("fetch", "done", 0.4, "3 comments"), StageLine("reproduce", "done", 75, "a | b")],
        next_steps=["triage"], contacts=["@alice (reporter)"], facts=[("Verdict", "flaky")],
        sections=[Section("Reproduction", fence("out", "text"))],
    ))
    heads = [line for line in text.splitlines() if line.startswith("#")]
    assert heads == ["# Scrub of o/r#1", "## Changes Made", "## Reproduction", "## Execution Log",
                     "## Next Steps", "## Developers to Contact"]
    assert "- **Status**: Partial — flaky @\u200balice" in text
    assert "- **PR Link**: none" in text and "- **Test Created**: `test/test_x.py`" in text
    assert "| fetch | done | 0.4 s | 3 comments |" in text
    assert "| reproduce | done | 1 min 15 s | a \\| b |" in text


def test_run_report_refuses_an_unknown_status():
    with pytest.raises(ValueError):
        render_run_report(RunReport(title="t", status="Great"))


def test_a_change_next_to_an_untested_release_is_said_as_a_range():
    text = render_issue_comment(IssueComment(False, "2.13.0", fixed_in="2.12", last_broken="2.10", untested=["2.11"]))
    assert "first stops" not in text
    assert ("It stops reproducing between PyTorch 2.10 (it still reproduces there) and 2.12 (it no longer does); "
            "2.11 could not be tested, so the change may be there.") in text
    text = render_issue_comment(IssueComment(True, "2.13.0", regressed_in="2.12", last_good="2.10", untested=["2.11"]))
    assert "first reproduces" not in text and "It starts reproducing between PyTorch 2.10" in text
