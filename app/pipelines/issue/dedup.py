"""Cross-report dedup: an issue whose observed failure is another open issue's, or a known CI
failure's, says so ("Same failure as #NNNN.") and both are linked on the signature's page.

The failure is matched on its error key (`app.engine.verdict.same_error`: `Class: first
message line`, normalized; an error too generic to tell bugs apart has none and matches
nothing). Only a failure the repro showed counts (the run reproduced the report, or failed
with a different error), never the error the report quotes. The issue's own error is kept as
an issue-side signature (`HistoryStore.observe_issue`) that links every issue seen with it;
a matching CI signature links the issue too. Another issue counts only while it is open
(asked of GitHub, a few at most). Offline (no signature store) nothing is matched.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.ci_history import SignatureLink
from app.engine.report.render import inline_code, no_mentions
from app.engine.verdict import classify as verdicts
from app.engine.verdict.same_error import error_key
from app.github.port import GitHubAPIError
from app.pipelines.base import RunContext
from app.pipelines.issue.state import IssueState, PublishPlan

Json = dict[str, Any]
MAX_ISSUES_ASKED = 5
MATCHING_VERDICTS = (verdicts.REPRODUCES, verdicts.DIFFERENT)


def observed_key(state: IssueState) -> tuple[str, str, str]:
    """(key, exception, message) of the failure the runs showed; ("", "", "") when none counts."""
    reproduction = state.reproduction
    if reproduction is None or state.verdict not in MATCHING_VERDICTS:
        return "", "", ""
    result = reproduction.result or {}
    if result.get("outcome") not in ("error", "crash"):
        return "", "", ""
    exception, message = str(result.get("exception") or ""), str(result.get("message") or "")
    return error_key(exception, message), exception, message


def _open(ctx: RunContext, repo: str, number: int) -> Json | None:
    try:
        issue = ctx.github.get_issue(repo, number)
    except GitHubAPIError:
        return None
    return issue if issue.get("state") == "open" and "pull_request" not in issue else None


def same_failures(ctx: RunContext, state: IssueState) -> list[Json]:
    """Link this issue to its failure's signatures; the other open issues and CI signatures
    with the same failure: `{"kind": "issue", "number", "title", "fingerprint"}` / `{"kind": "ci",
    "fingerprint", "runs"}`."""
    store, github = ctx.signatures, ctx.github
    key, exception, message = observed_key(state)
    repo, number = ctx.params.get("repo") or "", ctx.params.get("issue")
    if store is None or github is None or not key or not repo or not isinstance(number, int):
        return []
    title = str(state.issue.get("title") or "")[:300]
    mine = SignatureLink("issue", number, title, ctx.run_id, "reported")
    store.link(repo, store.observe_issue(repo, key, exception, message), mine)
    found: list[Json] = []
    asked = 0
    for match in store.find_by_error(repo, key):
        if match.source == "ci":
            store.link(repo, match.fingerprint, replace(mine, relation="same failure"))
            found.append({"kind": "ci", "fingerprint": match.fingerprint, "runs": match.count})
            continue
        for link in match.links:
            if link.kind != "issue" or link.number == number or asked >= MAX_ISSUES_ASKED:
                continue
            asked += 1
            other = _open(ctx, repo, link.number)
            if other is not None:
                found.append({"kind": "issue", "number": link.number, "title": str(other.get("title") or "")[:200],
                              "fingerprint": match.fingerprint})
    return found


def sentence(found: list[Json], repo: str, public_url: str = "") -> str:
    """"Same failure as #12 and #30; seen in CI: ..." for the comment ("" when nothing matched)."""
    issues = [f"#{f['number']}" for f in found if f["kind"] == "issue"]
    ci = [f for f in found if f["kind"] == "ci"]
    parts = []
    if issues:
        parts.append(f"Same failure as {' and '.join(issues)}.")
    for f in ci:
        where = f"{public_url.rstrip('/')}/signatures/{repo}/{f['fingerprint'][:12]}" if public_url else \
            inline_code(f["fingerprint"][:12])
        parts.append(f"Same failure as a known CI failure (failed in {f['runs']} workflow run"
                     f"{'' if f['runs'] == 1 else 's'}): {where}.")
    return no_mentions(" ".join(parts))


def with_same_failures(plan: PublishPlan, found: list[Json], repo: str, public_url: str = "") -> PublishPlan:
    line = sentence(found, repo, public_url)
    if not line or not plan.comment:
        return plan
    return replace(plan, comment=f"{plan.comment.rstrip()}\n\n{line}\n")
