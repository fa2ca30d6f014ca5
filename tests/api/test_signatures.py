"""`/api/v1/signatures/...`, `/api/v1/flaky` and their pages: a signature's history and the
flaky tests, read like runs: a private repository's only by people who may read it."""

from __future__ import annotations

from app.ci_history import Classification, Occurrence, SignatureLink
from app.db.signatures import DbSignatureStore
from app.engine.cilogs.archive import Failure
from tests.api.test_access import PRIVATE, REPO, oauth, sign_in  # noqa: F401  (fixture)


def _seed(database, repo: str, test: str, runs: list[tuple[int, str, bool]], flaky: bool = False) -> str:
    """A signature of `repo` failing in `runs` = (workflow run, branch, passed on rerun)."""
    store = DbSignatureStore(database)
    failure = Failure(job="tests (3.11)", test=test, kind="exception", exception="AssertionError",
                      message="cache returned a stale entry", signature=(test.encode().hex() * 8)[:64])
    for run_id, branch, passed in runs:
        store.observe(repo, failure, run_id)
        scope = "trunk" if branch == "main" else "pr"
        store.record_occurrence(repo, Occurrence(
            failure.signature, run_id, head_branch=branch, event="push" if scope == "trunk" else "pull_request",
            head_repo=repo, pull_requests=() if scope == "trunk" else (42,), passed_on_rerun=passed,
            classification=Classification(scope=scope, same_repo=True, flaky=passed, evidence=(f"{scope}: seen",))),
            error_key="AssertionError: cache returned a stale entry")
    if flaky:
        store.mark_flaky(repo, failure.signature, "the CI job's reruns: 7/35 failed")
    store.link(repo, failure.signature, SignatureLink("issue", 77, "cache is stale", relation="same failure"))
    return failure.signature


def test_a_signature_page_and_its_json_show_its_history(oauth):  # noqa: F811
    client, database, _, fake = oauth
    fp = _seed(database, REPO, "tests/test_cache.py::test_refresh", [(1, "main", False), (2, "fix", True),
                                                                      (3, "main", False)])
    data = client.get(f"/api/v1/signatures/{REPO}/{fp[:12]}").json()
    assert (data["runs"], data["attempts_failed"], data["passed_on_rerun"]) == (3, 3, 1)
    assert data["ci_rate"] == 0.75 and data["flaky"] is True  # a rerun that passed made it flaky
    assert data["branches"] == {"main": 2, "fix": 1} and data["pull_requests"] == [42]
    assert data["classifications"] == {"trunk": 2, "flaky": 1}
    assert data["links"][0] | {} == {"kind": "issue", "number": 77, "title": "cache is stale",
                                     "relation": "same failure", "run_id": None}
    assert [o["workflow_run_id"] for o in data["occurrences"]] == [3, 2, 1]  # newest first
    assert data["first_seen"] <= data["last_seen"]
    html = client.get(f"/signatures/{REPO}/{fp[:12]}").text
    assert "failed in 3 workflow runs" in html and "3 of 4 attempts failed" in html and "#77" in html
    assert client.get(f"/api/v1/signatures/{REPO}/{'0' * 12}").status_code == 404
    assert client.get(f"/api/v1/signatures/{REPO}/abc").status_code == 422  # too short to name one


def test_flaky_tests_most_often_failing_first_with_their_rates(oauth):  # noqa: F811
    client, database, _, _ = oauth
    _seed(database, REPO, "tests/a.py::test_once", [(10, "fix", True)])
    _seed(database, REPO, "tests/b.py::test_often", [(20, "main", False), (21, "main", False), (22, "x", True)])
    _seed(database, REPO, "tests/c.py::test_solid", [(30, "main", False)])  # not flaky: not listed
    _seed(database, REPO, "tests/d.py::test_job", [(40, "main", False)], flaky=True)
    rows = client.get("/api/v1/flaky").json()
    # By runs failed; a tie, the most recently seen first.
    assert [r["test"] for r in rows] == ["tests/b.py::test_often", "tests/d.py::test_job", "tests/a.py::test_once"]
    assert rows[0]["ci_rate"] == 0.75 and rows[2]["ci_rate"] == 0.5
    assert rows[1]["flaky_evidence"] == "the CI job's reruns: 7/35 failed"
    page = client.get("/flaky").text
    assert page.index("test_often") < page.index("test_once") and "test_solid" not in page


def test_a_private_repositorys_signatures_only_for_those_who_may_read_it(oauth):  # noqa: F811
    client, database, _, fake = oauth
    fp = _seed(database, PRIVATE, "tests/secret.py::test_leak", [(50, "main", False), (51, "fix", True)])
    _seed(database, REPO, "tests/open.py::test_open", [(60, "fix", True)])
    url = f"/api/v1/signatures/{PRIVATE}/{fp[:12]}"
    missing = f"/api/v1/signatures/{PRIVATE}/{'0' * 12}"
    # anonymous (public runs readable): the private signature is the same 404 as a missing one
    assert client.get(url).status_code == client.get(missing).status_code == 404
    assert client.get(url).json()["detail"].replace(fp[:12], "X") == client.get(missing).json()["detail"].replace("0" * 12, "X")
    assert client.get(f"/signatures/{PRIVATE}/{fp[:12]}", follow_redirects=False).status_code == 404
    assert [r["repo"] for r in client.get("/api/v1/flaky").json()] == [REPO]
    sign_in(client, fake, "wanda")  # writes to the public repository, nothing on the private one
    assert client.get(url).status_code == 404  # as if there were none
    assert "test_leak" not in client.get("/flaky").text
    sign_in(client, fake, "reed")  # triage on the private repository
    assert client.get(url).json()["test"] == "tests/secret.py::test_leak"
    assert {r["repo"] for r in client.get("/api/v1/flaky").json()} == {REPO, PRIVATE}
