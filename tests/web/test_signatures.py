"""The run page names the signatures a CI ingest classified (with the label, the evidence, why
a job did or did not open) and links each one's page; a CI job's page names its own."""

from __future__ import annotations

from app.web.signatures import run_signatures, signature_url
from tests.web.sample_runs import add_run, context, stage

FP = "e" * 64
CLASSIFIED = {"fingerprint": FP, "count": 2, "linked_run_id": None, "decision": "known flaky: not this change's failure",
              "classification": {"label": "flaky", "evidence": ["pr: a `pull_request` run on `fix`",
                                                                "flaky: a later attempt of this workflow run passed"]}}


def test_an_ingests_run_page_links_each_signature_with_its_classification(client, database, settings):
    run_id = add_run(database, kind="ci_ingest", repo="o/r", target="https://github.com/o/r/actions/runs/5")
    stage(context(database, settings, run_id), "record", "done", "1 failures (flaky)", {"signatures": [CLASSIFIED]})
    html = client.get(f"/runs/{run_id}").text
    assert f'href="/signatures/o/r/{FP[:12]}"' in html
    assert "flaky</span>" in html and "a later attempt of this workflow run passed" in html
    assert "CI job: known flaky: not this change&#39;s failure" in html


def test_a_ci_jobs_signature_comes_from_its_params_and_other_runs_have_none():
    params = {"fingerprint": FP, "classification": {"label": "trunk", "evidence": ["trunk: a push"]},
              "why": "failed in 2 trunk runs (threshold 2)"}
    [row] = run_signatures("ci_failure", "o/r", params, [])
    assert row == {"short": FP[:12], "url": signature_url("o/r", FP), "label": "trunk",
                   "evidence": ["trunk: a push"], "decision": "failed in 2 trunk runs (threshold 2)"}
    assert run_signatures("issue", "o/r", params, []) == []
    assert signature_url("o/r", FP) == f"/signatures/o/r/{FP[:12]}"
