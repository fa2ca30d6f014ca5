"""Webhook deliveries: signature check and routing, over the raw bytes and a plain dict.

Payloads are read leniently (`dig`), never through strict models: GitHub adds fields, omits
others, and a delivery must not be dropped for a field we do not use. `route` is pure: it
says what a delivery asks for; the API records it and enqueues.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field
from typing import Any

from app.domain import CommandRequest, parse_command

DISPATCH_WORKFLOW = "scrub-dispatch.yml"


def verify_signature(secret: str, body: bytes, header: str | None) -> bool:
    """`X-Hub-Signature-256: sha256=<hex>` over the exact body, compared in constant time."""
    if not secret or not header or not header.startswith("sha256="):
        return False
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header.removeprefix("sha256=").strip().lower())


def sign(secret: str, body: bytes) -> str:
    """The header value GitHub would send (tests and the benchmark sign with it)."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def dig(data: Any, *path: str, default: Any = None) -> Any:
    """`data[p0][p1]...`, or `default` when any step is missing or not a mapping."""
    for key in path:
        if not isinstance(data, dict):
            return default
        data = data.get(key)
    return default if data is None else data


def as_int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


# Issue, PR and installation numbers are stored in 32-bit INTEGER columns on Postgres; GitHub's
# are far below this. A number outside 1..NUMBER_MAX is no number GitHub gives: the event is
# ignored (on Postgres it once reached the insert and the webhook answered 503).
NUMBER_MAX = 2**31 - 1


def as_number(value: Any) -> int | None:
    """A positive number that fits the columns it goes to; None for anything else."""
    number = as_int(value)
    return number if number is not None and 1 <= number <= NUMBER_MAX else None


@dataclass(frozen=True)
class StartRun:
    """Create a run of `kind` and enqueue it."""

    kind: str
    repo: str
    target: str
    trigger: str
    issue: int | None = None
    installation_id: int | None = None
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Ignore:
    reason: str


# A `/scrub` command, its word as typed: the worker resolves the word through the run kinds
# (an unknown one gets the help), checks the commenter's permission, then acts.
RunCommand = CommandRequest
Decision = StartRun | CommandRequest | Ignore


def repo_of(payload: dict[str, Any]) -> str:
    return str(dig(payload, "repository", "full_name", default=""))


def route(event: str, payload: dict[str, Any], trigger_label: str) -> Decision:
    action = payload.get("action")
    if event == "ping":
        return Ignore("pong")
    if event == "issues" and action == "labeled":
        return _labeled(payload, trigger_label)
    if event == "issue_comment" and action == "created":
        return _comment(payload)
    if event == "workflow_run" and action == "completed":
        return _workflow_run(payload)
    if event == "workflow_dispatch":
        return _dispatch(payload)
    return Ignore(f"{event}.{action}" if action else event)


def _labeled(payload: dict[str, Any], trigger_label: str) -> Decision:
    label = dig(payload, "label", "name", default="")
    number = as_number(dig(payload, "issue", "number"))
    if label != trigger_label:
        return Ignore(f"label {label!r} is not the trigger label")
    if number is None or not repo_of(payload):
        return Ignore("labeled event without an issue number or repository")
    repo, url = repo_of(payload), dig(payload, "issue", "html_url", default="")
    return StartRun(
        kind="issue",
        repo=repo,
        target=url,
        trigger="label",
        issue=number,
        installation_id=as_number(dig(payload, "installation", "id")),
        params={
            "repo": repo,
            "issue": number,
            "url": url,
            "requested_by": dig(payload, "sender", "login", default=""),
            "labeled_by": dig(payload, "sender", "login", default=""),
            "author_association": dig(payload, "issue", "author_association", default=""),
        },
    )


def _comment(payload: dict[str, Any]) -> Decision:
    command = parse_command(dig(payload, "comment", "body", default=""))
    if command is None:
        return Ignore("comment is not a /scrub command")
    if dig(payload, "comment", "user", "type") == "Bot" or dig(payload, "sender", "type") == "Bot":
        return Ignore("comment by a bot")
    number, repo = as_number(dig(payload, "issue", "number")), repo_of(payload)
    user = dig(payload, "comment", "user", "login") or dig(payload, "sender", "login", default="")
    if number is None or not repo or not user:
        return Ignore("command without an issue, repository or user")
    return CommandRequest(
        command=command.word,
        repo=repo,
        issue=number,
        user=str(user),
        installation_id=as_number(dig(payload, "installation", "id")),
        issue_url=dig(payload, "issue", "html_url", default=""),
        args=command.args,
    )


def _workflow_run(payload: dict[str, Any]) -> Decision:
    """A failed run is ingested; so is a rerun that passed (attempt > 1: its earlier failures
    were flaky). Where the run came from travels with it: the event, the head repository (a
    fork's PR names the fork; GitHub leaves `pull_requests` empty for it) and the default
    branch, for the classification (app.engine.cilogs.classify). Nothing here is trusted to
    decide what may be checked out or pushed: see app.pipelines.kit.checkout."""
    run = dig(payload, "workflow_run", default={})
    conclusion, attempt = dig(run, "conclusion"), as_int(dig(run, "run_attempt")) or 1
    if conclusion != "failure" and not (conclusion == "success" and attempt > 1):
        return Ignore(f"workflow run concluded {conclusion!r}, not failure")
    run_id, repo = as_int(dig(run, "id")), repo_of(payload)
    if run_id is None or not repo:
        return Ignore("workflow run without an id or repository")
    pulls = dig(run, "pull_requests", default=[])
    numbers = [n for n in (as_number(dig(p, "number")) for p in (pulls if isinstance(pulls, list) else [])[:50]) if n]
    return StartRun(
        kind="ci_ingest",
        repo=repo,
        target=dig(run, "html_url", default=""),
        trigger="workflow_run",
        installation_id=as_number(dig(payload, "installation", "id")),
        params={
            "repo": repo,
            "url": dig(run, "html_url", default=""),
            "workflow_run_id": run_id,
            "run_attempt": attempt,
            "conclusion": conclusion,
            "head_sha": dig(run, "head_sha", default=""),
            "head_branch": dig(run, "head_branch", default=""),
            "name": dig(run, "name", default=""),
            "workflow_path": dig(run, "path", default=""),
            "event": dig(run, "event", default=""),
            "head_repository": str(dig(run, "head_repository", "full_name", default="")),
            "default_branch": str(dig(payload, "repository", "default_branch", default="")),
            "pull_requests": numbers,
        },
    )


def _dispatch(payload: dict[str, Any]) -> Decision:
    workflow = str(dig(payload, "workflow", default=""))
    if not workflow.endswith(DISPATCH_WORKFLOW):
        return Ignore(f"workflow_dispatch of {workflow or 'an unnamed workflow'}, not {DISPATCH_WORKFLOW}")
    repo = repo_of(payload)
    if not repo:
        return Ignore("workflow_dispatch without a repository")
    inputs = dig(payload, "inputs", default={})
    inputs = inputs if isinstance(inputs, dict) else {}
    if str(inputs.get("fuzz-seed") or "").strip() or str(inputs.get("fuzzed-program") or "").strip():
        return StartRun(  # seed 000: a fuzz seed or a fuzzed program -> the fuzz job
            kind="fuzz",
            repo=repo,
            target=f"fuzz seed {inputs['fuzz-seed']}" if inputs.get("fuzz-seed") else "a fuzzed program",
            trigger="dispatch",
            installation_id=as_number(dig(payload, "installation", "id")),
            params={"repo": repo, "ref": dig(payload, "ref", default=""), "trigger": "dispatch",
                    "fuzz-seed": str(inputs.get("fuzz-seed") or "").strip(),
                    "fuzzed-program": str(inputs.get("fuzzed-program") or ""),
                    "requested_by": dig(payload, "sender", "login", default="")},
        )
    return StartRun(
        kind="improve",
        repo=repo,
        target=str(inputs.get("url") or dig(payload, "repository", "html_url", default="")),
        trigger="dispatch",
        installation_id=as_number(dig(payload, "installation", "id")),
        params={**inputs, "repo": repo, "ref": dig(payload, "ref", default=""), "workflow": workflow,
                "default_branch": str(dig(payload, "repository", "default_branch", default=""))},
    )


def event_key(event: str, payload: dict[str, Any]) -> str | None:
    """What a delivery is about, when GitHub gives it an id of its own: a comment's id, a
    workflow run's id and attempt. Recorded unique with the delivery, so a signed delivery
    replayed under a new `X-GitHub-Delivery` id is a duplicate (no second command, no second
    count of the same failure); a label application by the issue, the label and the issue's
    `updated_at`. None when the event has no such id."""
    action = payload.get("action")
    if event == "issue_comment" and (comment_id := as_int(dig(payload, "comment", "id"))) is not None:
        # With its author and words: a replay repeats them (they are signed); only a payload made
        # up with a reused id could differ, and it then counts as another comment.
        said = f"{dig(payload, 'comment', 'user', 'login', default='')}\n{dig(payload, 'comment', 'body', default='')}"
        return f"issue_comment.{action}:{comment_id}:{hashlib.sha256(said.encode('utf-8', 'replace')).hexdigest()[:16]}"
    if event == "workflow_run" and (run_id := as_int(dig(payload, "workflow_run", "id"))) is not None:
        return f"workflow_run.{action}:{run_id}:{as_int(dig(payload, 'workflow_run', 'run_attempt')) or 1}"[:200]
    if event == "issues" and action == "labeled" and (number := as_int(dig(payload, "issue", "number"))) is not None:
        # A label has no id, but applying it moves the issue's `updated_at`: the same label on
        # the same issue at the same moment is the same application (a replay), a later one a
        # new request.
        label, moment = dig(payload, "label", "name", default=""), dig(payload, "issue", "updated_at", default="")
        if isinstance(label, str) and isinstance(moment, str) and moment:
            said = f"{repo_of(payload)}#{number}\n{moment}\n{label}"
            return f"issues.labeled:{hashlib.sha256(said.encode('utf-8', 'replace')).hexdigest()[:32]}"
    return None
