"""The fix summary: the seed's questions from what the fix command wrote."""

from app.engine.fuzz.summary import parse_summary


def test_title_summary_and_answers_by_heading_keyword():
    summary = parse_summary("# Guard empty mean\n\nmean divided by zero.\n\n## Root cause\nNo guard.\n"
                            "## Runtime complexity\nO(1).\n## Other similar operations\nvar, std.\n")
    assert summary.title == "Guard empty mean" and summary.summary == "mean divided by zero."
    assert summary.answers == {"root_cause": "No guard.", "complexity": "O(1).", "similar": "var, std."}
    text = summary.render()
    assert "What was the root cause? No guard." in text
    assert "What edge cases does the fix handle? (not answered by the fix command)" in text


def test_no_summary_says_so():
    assert not parse_summary("").written
    assert "wrote no summary" in parse_summary(None).render()
