"""The diagnosis as markdown: pattern, one line per experiment (what ran first), next step;
nothing the repro printed can mention anyone."""

from __future__ import annotations

from app.engine.diagnosis.model import NOT_RUN, RAN, DiagnosisReport, Finding
from app.engine.diagnosis.text import markdown


def test_the_block_lists_what_ran_before_what_did_not_and_defuses_mentions():
    report = DiagnosisReport(
        patterns=["compile_failure"], hints=["A torch.compile failure: ..."],
        findings=[Finding("on_cpu", "cuda", NOT_RUN, "not run (a readable error on CPU): it needs a GPU"),
                  Finding("backends", "compile", RAN, "fails under backend='eager' too: ping @octocat")],
        next_step="A Dynamo bug.")
    text = markdown(report)
    assert text.startswith("**Diagnosis** (pattern `compile_failure`):\n\n- **torch.compile backends**: fails")
    assert text.index("torch.compile backends") < text.index("**on CPU**")
    assert "@octocat" not in text and "octocat" in text
    assert text.endswith("Next step: A Dynamo bug.")


def test_nothing_to_say_is_an_empty_block():
    assert markdown(None) == "" and markdown(DiagnosisReport()) == ""
    assert markdown(DiagnosisReport(patterns=["segfault"], hints=["A native crash: rerun under gdb."])) == (
        "**Diagnosis** (pattern `segfault`):\n\n- A native crash: rerun under gdb.")
