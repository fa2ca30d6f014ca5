"""A stranger's comment cannot get a live bug closed (issue #21, item 3).

The attack: the reporter's repro fails with the reported error; someone with no role on the
repository comments a short snippet that passes; a triager labels the issue. On the code
before this change the selection took the stranger's shorter snippet, the verdict was
"fixed", and Scrubbot commented "no longer reproduces" and closed the live bug.

Now a commenter's repro replaces the reporter's only if the commenter has triage permission or
higher (asked through the permission API), or if it shows the reported failure when the
reporter's does not; and only the reporter's (or a triager's) repro can close an issue.
Through the real client against the fake GitHub over HTTP, and the real sandbox.
"""

from __future__ import annotations

from app.github.client import GitHubClient
from app.pipelines.base import run_pipeline
from app.pipelines.issue.stages import STAGES
from app.pipelines.memory import MemoryRunContext
from app.settings import Settings

REPO = "octo/torchlike"
FENCE = "```"
REPORTED = "RuntimeError: index 3 is out of bounds for dimension 0 with size 3"
REPORTER_REPRO = ("def lookup(i):\n    rows = [10, 20, 30]\n    if i >= len(rows):\n"
                  "        raise RuntimeError(f'index {i} is out of bounds for dimension 0 with size {len(rows)}')\n"
                  "    return rows[i]\nprint(lookup(3))")
TRACEBACK = f"{FENCE}\nTraceback (most recent call last):\n  File \"repro.py\", line 6, in <module>\n{REPORTED}\n{FENCE}"


def py(code: str) -> str:
    return f"{FENCE}python\n{code}\n{FENCE}"


def scrub(fake, number: int):
    client = GitHubClient(token="test-token", base_url=fake.url)
    ctx = MemoryRunContext(run_id=1, github=client, settings=Settings(sandbox="bwrap", repro_timeout=20),
                           params={"repo": REPO, "issue": number, "labeled_by": "tina"})
    finished = run_pipeline(STAGES, ctx, any_queue=True)
    state: dict = {}
    for record in ctx.stages:
        state.update(record.output)
    return finished, state


def ours(fake, number: int) -> list[str]:
    return [c["body"] for c in fake.comments(REPO, number) if "<!-- scrubbot:run=" in (c["body"] or "")]


def test_a_strangers_passing_snippet_does_not_close_a_live_bug(fake_github):
    fake_github.add_collaborator(REPO, "tina", "triage")  # labels the issue
    number = fake_github.add_issue(REPO, title="lookup fails", body=py(REPORTER_REPRO) + "\n" + TRACEBACK,
                                   user="reporter")["number"]
    fake_github.add_comment(REPO, number, "Works for me, can be closed:\n" + py("rows = [10, 20, 30]\nprint(rows[2])"),
                            user="mallory", created_at="2030-01-01T00:00:01Z")
    finished, state = scrub(fake_github, number)
    assert finished.verdict == "reproduces"
    assert state["repro"]["author"] == "reporter"
    assert fake_github.issue(REPO, number)["state"] == "open"
    (comment,) = ours(fake_github, number)
    assert comment.startswith("This issue still reproduces") and "(by reporter)" in comment


def test_a_strangers_snippet_replaces_the_reporters_only_by_showing_the_failure(fake_github):
    fake_github.add_collaborator(REPO, "tina", "triage")
    body = "My code:\n" + py("print(sum([1, 2]))") + "\n" + TRACEBACK  # the reporter's block shows nothing
    number = fake_github.add_issue(REPO, title="lookup fails", body=body, user="reporter")["number"]
    fake_github.add_comment(REPO, number, "Here is a repro:\n" + py(REPORTER_REPRO), user="helper",
                            created_at="2030-01-01T00:00:01Z")
    finished, state = scrub(fake_github, number)
    assert finished.verdict == "reproduces"
    assert state["repro"]["author"] == "helper" and "did not show the reported failure" in state["repro"]["why"]
    assert fake_github.issue(REPO, number)["state"] == "open"


def test_a_strangers_only_snippet_that_passes_never_closes(fake_github):
    fake_github.add_collaborator(REPO, "tina", "triage")
    number = fake_github.add_issue(REPO, title="lookup fails", body="It fails:\n" + TRACEBACK, user="reporter")["number"]
    fake_github.add_comment(REPO, number, py("ok = True\nassert ok"), user="mallory", created_at="2030-01-01T00:00:01Z")
    finished, state = scrub(fake_github, number)
    assert finished.verdict != "fixed"
    assert fake_github.issue(REPO, number)["state"] == "open"
