"""The reproduce stage's evidence: who may speak for the project, which block runs, the witness.

- `trusted_commenters`: commenters with triage permission or higher (the permission API
  through the port); only they may replace the reporter's repro without running it.
- `run_repro`: the repeated runs of one block (`runner.reproduce`), with what the verdict reads
  of the script (`judge_args`): its own checks, exit codes and prints, the stated values.
- `try_alternates`: when the chosen block shows nothing, one run of each other repro block.
- `witness`: before "fixed", evidence that this script once failed (`app.engine.verdict.witness`).

Split from `stages.py` so the stage functions stay short; the rules are in `README.md`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app import approvals
from app.engine.issue import repro_facts
from app.engine.issue import review as security
from app.engine.verdict import classify as verdicts
from app.engine.verdict import witness as witnessing
from app.engine.verdict.classify import REPRODUCES
from app.engine.verdict.script import ScriptFacts
from app.pipelines.base import RunContext
from app.pipelines.issue import runner
from app.pipelines.issue.state import IssueState
from app.pipelines.state import plain

MAX_ROLE_LOOKUPS = 10  # commenters whose permission is asked for, per run


def trusted_commenters(ctx: RunContext, candidates: list[Any], op: str, triage_roles: tuple[str, ...],
                       also: list[dict[str, Any]] = ()) -> list[str]:
    """Commenters with triage permission or higher (the permission API through the port), among
    those who posted code (only they may replace the reporter's repro without running it) and
    the authors of the comments in `also` (one that calls the issue a duplicate)."""
    if ctx.github is None:
        return []
    repo = str(ctx.params["repo"])
    authors = [c.author for c in candidates] + [(post.get("user") or {}).get("login", "") for post in also]
    logins = list(dict.fromkeys(a for a in authors if a and a != op))[:MAX_ROLE_LOOKUPS]
    trusted = []
    for login in logins:
        try:
            role = ctx.github.permission(repo, login)
        except Exception as exc:  # noqa: BLE001 - an unanswered check is no permission
            ctx.log(f"permission of {login} unknown ({exc}); treated as no role")
            continue
        if role in triage_roles:
            trusted.append(login)
    return trusted


def judge_args(state: IssueState, source: str) -> dict[str, Any]:
    return {"self_checking": repro_facts.checks_itself(source), "expected_exception": state.expected_exception,
            "script": ScriptFacts.read(source), "values": state.stated_values}


def run_repro(ctx: RunContext, state: IssueState, repro: Any, label: str, older: str | None) -> Any:
    """The repeated runs of `repro`; as few clean runs as "passes now" needs when nothing could
    witness a fix (no self-check, no older release), the full 14 otherwise."""
    args = judge_args(state, repro.source)
    could_witness = older is not None or self_check(state, repro) is not None
    return runner.reproduce(ctx.settings, repro.source, plain(state.reported), label, **args,
                            clean_runs=None if could_witness else runner.PASSES_NOW_RUNS)


def self_check(state: IssueState, repro: Any) -> Any:
    return witnessing.self_check(trusted=repro.trusted, role=repro.role, verbatim=repro.verbatim and not repro.cuda_dropped,
                                 reported=plain(state.reported), facts=ScriptFacts.read(repro.source))


def witness(ctx: RunContext, state: IssueState, repro: Any, older: str | None) -> Any:
    """Evidence that the script that passes now once showed the bug (`app.engine.verdict.witness`)."""
    if not repro.trusted:
        return witnessing.missing(witnessing.no_witness_reason(
            trusted=False, role=repro.role, verbatim=repro.verbatim, reported=plain(state.reported),
            facts=ScriptFacts.read(repro.source), older_tried=older is not None))
    if found := self_check(state, repro):
        return found
    if older is not None and (state.reported or state.stated_values):
        args = judge_args(state, repro.source)
        seen, observed = runner.witness_runs(ctx.settings, repro.source, older, lambda run: verdicts.classify(
            plain(state.reported), run, source=repro.source, **args))
        return witnessing.older_release(older, seen, observed)
    return witnessing.missing(witnessing.no_witness_reason(
        trusted=True, role=repro.role, verbatim=repro.verbatim and not repro.cuda_dropped,
        reported=plain(state.reported) or plain(state.stated_values), facts=ScriptFacts.read(repro.source),
        older_tried=older is not None))


def try_alternates(ctx: RunContext, state: IssueState, label: str, triage_roles: tuple[str, ...]) -> tuple[Any, str] | None:
    """When the chosen repro does not show the reported failure, one run of each other repro
    block (clean security scan only, and only under a triager's label or an approval): the first
    that shows the reported failure replaces it. Nothing reported: nothing to show, no switch."""
    if not (state.reported or state.stated_values) or not state.alternates:
        return None
    if not (state.label_role in triage_roles or approvals.approved(ctx.params, approvals.digest(state.repro.source))):
        return None
    for other in state.alternates:
        if security.scan(other.source):
            continue
        run = runner.run_once(ctx.settings, other.source, label)
        if verdicts.classify(plain(state.reported), run, source=other.source,
                             **judge_args(state, other.source)) == REPRODUCES:
            why = (f"the first choice ({state.repro.where}, line {state.repro.line}) did not show the reported "
                   f"failure; this block did")
            return replace(other, why=why), why
    return None
