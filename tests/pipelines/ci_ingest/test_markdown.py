from app.pipelines.ci_ingest.markdown import failures_markdown

WF = {"id": 7, "name": "CI", "html_url": "https://github.com/o/r/actions/runs/7"}


def test_each_failure_shows_its_classification_and_why_a_job_did_or_did_not_open():
    row = {"job": "tests", "test": "t.py::test_x", "kind": "exception", "exception": "ValueError",
           "message": "bad | value", "count": 2, "linked_run_id": None, "signature": "ab" * 32, "hint": "",
           "classification": {"label": "broken trunk", "evidence": ["pr: a `pull_request` run on `fix`",
                                                                    "broken trunk: it failed on the merge base"]},
           "decision": "broken trunk: attributed to trunk, not to this change"}
    text = failures_markdown([row], WF)
    assert "| broken trunk |" in text and "bad \\| value" in text and "`abababababab`" in text
    assert "**broken trunk**: pr: a 'pull_request' run on 'fix'; broken trunk: it failed on the merge base" in text
    assert "CI job: broken trunk: attributed to trunk" in text
    assert "No failing test found" in failures_markdown([], WF)
