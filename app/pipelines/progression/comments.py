"""What a re-check says on GitHub: one comment per change of state, never one per check.

`transition(last, verdict)` is the change worth a comment: an issue or PR found fixed, an
issue that passes now without a witness, and one that reproduces again after passing. A
re-check that finds what the last one found (still reproducing), or cannot tell, writes nothing.

The issue comment of a fix starts as the seed's template does (`This issue no longer reproduces
on PyTorch X`), says `fixed in X by #NNNN` (X: the first build without the bug the search found),
the witness, what the runs showed, and the culprit with its probes.
"""

from __future__ import annotations

from typing import Any

from app.domain import Verdict
from app.engine.report.render import no_mentions
from app.engine.verdict.culprit import NIGHTLY, RELEASE, Culprit, describe, evidence, ref

FIXED_LABEL = "fixed"
PASSES_NOW_LABEL = "passes now"


def transition(last: str | None, verdict: str | None) -> str:
    """`"reproduces -> fixed"` for a change worth one comment; "" otherwise."""
    if verdict == Verdict.fixed and last != Verdict.fixed:
        return f"{last} -> fixed"
    if verdict == Verdict.passes_now and last != Verdict.passes_now:
        return f"{last} -> passes-now"
    if verdict == Verdict.reproduces and last == Verdict.passes_now:
        return "passes-now -> reproduces"
    return ""


def fixed_in(culprit: Culprit | None, build: str) -> str:
    """The first build without the bug: the nightly the search found, else the build checked."""
    nightly = next((level for level in (culprit.levels if culprit else []) if level.level == NIGHTLY), None)
    if nightly is not None:
        found = nightly.result
        first = found.first_changed or (found.changed_between[1] if found.changed_between else None)
        if first and not found.untested:
            return nightly.name(first)
    return build


def _probes(culprit: Culprit) -> list[str]:
    lines = ["", "<details><summary>Probes</summary>", ""]
    lines += [no_mentions(line) for line in evidence(culprit)]
    return lines + ["", "</details>"]


def issue_comment(params: dict[str, Any], state: Any, closes: bool) -> str:
    build, repo = params["build"], str(params["repo"])
    label, verdict = str(build["label"]), state.verdict
    reason = no_mentions(str(params.get("reason") or "a scheduled re-check"))
    if verdict == Verdict.reproduces:
        return (f"This issue reproduces again on PyTorch {label}: {no_mentions(state.observed)}.\n\n"
                f"(Re-checked by Scrubbot: {reason}.)\n")
    if verdict == Verdict.passes_now:
        return (f"This issue passes on PyTorch {label} ({state.runs} clean runs), but Scrubbot cannot confirm "
                f"it is fixed: {no_mentions(state.witness)}. It stays open, labelled `{PASSES_NOW_LABEL}`, for a "
                f"person to confirm.\n\n(Re-checked by Scrubbot: {reason}.)\n")
    culprit = state.culprit
    pull = culprit.pull if culprit and culprit.certain else None
    first = fixed_in(culprit, label)
    lines = [f"This issue no longer reproduces on PyTorch {label}: fixed in {first}"
             + (f" by {ref(pull, culprit.repo, repo)}." if pull else "."), "",
             f"Witness: {no_mentions(state.witness)}.",
             f"Now: the repro runs to completion on {label} ({state.runs} clean runs in a row).", ""]
    if culprit is not None and culprit.level != RELEASE:
        lines.append(f"Culprit: {no_mentions(describe(culprit, repo))}.")
        lines += _probes(culprit) + [""]
    lines.append(f"(Re-checked by Scrubbot: {reason}.) "
                 + ("Closing it as fixed; reopen it if you still see the bug." if closes else
                    "It stays open: the script that ran is not the reporter's or a maintainer's, so only a "
                    "person may close it."))
    return "\n".join(lines) + "\n"


def pull_comment(params: dict[str, Any], state: Any) -> str:
    head, base = str(state.head), no_mentions(str(params.get("base") or "the default branch"))
    lines = [f"The generated test now passes on `{base}` at {head[:12]} ({state.runs} runs in the sandbox, "
             "without its expected-failure marker): the bug it reproduces is fixed"
             + (f"; {no_mentions(state.range_note)}." if state.range_note else "."), "",
             f"Witness: {no_mentions(state.witness)}.", "",
             "Closing this draft PR: the test is no longer an expected failure. (Re-checked by Scrubbot: "
             f"{no_mentions(str(params.get('reason') or 'a scheduled re-check'))}.)"]
    return "\n".join(lines) + "\n"
