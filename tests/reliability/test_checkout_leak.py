"""A CI rerun of a repository that tracks symlinks to secrets, through a real `scrub serve`.

The repository's failing test prints what `leak_env -> /proc/self/environ` and
`leak_key -> <secret file>` show. Scrubbot checks it out over HTTP from the fake GitHub,
reruns the test in the sandbox, opens a draft PR; the dispatch also names a hostile `remote`.
No secret value may appear in any API response, artifact, the server's log, or any GitHub
write; the checkout comes from the installation's repository, and the hostile remote is never
touched.
"""

from __future__ import annotations

import json
import subprocess

from tests.fakes.ci_project import make_ci_project
from tests.reliability.hostile_project import LEAK_TEST, PROBE, dispatch_payload, make_hostile_project

SECRET_FILE_VALUE = "secret-file-content-e1d8a4b7"


def _refs(bare) -> str:
    return subprocess.run(["git", "for-each-ref"], cwd=bare, capture_output=True, text=True, check=True).stdout


def test_symlinks_in_a_ci_checkout_leak_nothing(fake_github, serve, tmp_path):
    secret_file = tmp_path / "worker-secrets" / "key.pem"
    secret_file.parent.mkdir()
    secret_file.write_text(SECRET_FILE_VALUE)
    project = make_hostile_project(tmp_path / "remote", secret_file)
    fake_github.add_repo(project.repo)
    fake_github.serve_git(project.repo, project.bare)
    decoy = make_ci_project(tmp_path / "decoy", slow_s=1.0)  # the hostile `remote`
    decoy_refs = _refs(decoy.bare)

    raw_log = f"FAILED {LEAK_TEST} - AssertionError: {PROBE}\n1 failed, 2 passed in 0.10s\n"
    payload = dispatch_payload(project.repo, **{"raw-logs": raw_log, "remote": decoy.bare.as_uri()})
    answer = serve.post_webhook("workflow_dispatch", payload)
    assert answer.status_code == 202, answer.text
    run_id = answer.json()["run_id"]
    run = serve.wait_for_run(run_id)

    served = serve.get(f"/api/v1/runs/{run_id}").text + serve.get("/api/v1/runs").text
    served += serve.get(f"/runs/{run_id}").text + serve.get(f"/runs/{run_id}/artifacts/log").text
    detail = json.loads(serve.get(f"/api/v1/runs/{run_id}").text)
    stages = {s["stage"]: s for s in detail["stages"]}
    # The attack ran: the test read its links inside the sandbox and its output was stored.
    rerun_output = stages["rerun"]["output"]["rerun_output"]
    assert PROBE in rerun_output, json.dumps(detail)[:3000]
    print("what the links showed in the sandbox:", rerun_output[rerun_output.find(PROBE):][:300])
    # ... from the installation's repository, at its head, not from the `remote` input.
    assert stages["inputs"]["output"]["job"]["head_sha"] == project.head_sha
    assert _refs(decoy.bare) == decoy_refs
    writes = json.dumps([w.json for w in fake_github.writes])
    pushed = subprocess.run(["git", "log", "-p", "--all"], cwd=project.bare, capture_output=True,
                            text=True).stdout
    everything = {"API and status page": served, "GitHub writes": writes, "server log": serve.log(),
                  "pushed commits": pushed}
    for secret_name, value in {**serve.secrets, "secret file": SECRET_FILE_VALUE}.items():
        for where, text in everything.items():
            assert value not in text, f"the {secret_name} leaked into the {where}"
    assert run["status"] == "succeeded", run
    assert fake_github.pulls(project.repo), "the job should have opened a draft PR (a GitHub write to check)"
    print(f"run {run_id}: {run['status']} / {run['verdict']}; {len(fake_github.writes)} GitHub writes; "
          f"PRs: {[p['number'] for p in fake_github.pulls(project.repo)]}")
