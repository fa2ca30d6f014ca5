"""Reported error + what a run did -> the issue's verdict (seed `001` step 5).

The seed's three outcomes, plus what an unattended service must add:

- `reproduces`: the same error as reported: same exception class and a distinctive part of
  the message; a hang reported and a timeout; a segfault reported and a SIGSEGV.
- `fixed`: the run passes although an error was reported.
- `different-error`: it fails, but not the way the issue says.
- `missing-dependency`: it stops at an import of a package the worker does not have (the
  seed: ask rather than install), unless an import error is the reported bug.
- `inconclusive`: nothing to compare with (no reported error and a clean run, or a timeout
  nobody reported): Scrubbot cannot tell, and says so instead of closing the issue.

With no reported error, any exception or crash counts as reproducing (a correctness repro
with an `assert` fails with `AssertionError`).

A run is a plain dict: `outcome` (`error`, `passed`, `timeout`, `crash`), `exception`,
`message`, `signal` — the shape `scrub repro --json` prints.
"""

from __future__ import annotations

import re
import signal as signals
from typing import Any

from app.engine.verdict.normalize import normalize_text
from app.engine.verdict.signature import short_class

REPRODUCES, FIXED, DIFFERENT, INCONCLUSIVE = "reproduces", "fixed", "different-error", "inconclusive"
MISSING_DEPENDENCY = "missing-dependency"
_IMPORT_ERRORS = ("ModuleNotFoundError", "ImportError")
_DISTINCTIVE = 40  # characters of the reported message that must match (seed: "a distinctive substring")



def _normalized(message: str) -> str:
    return normalize_text(message or "").lower()


def same_exception(reported: dict[str, Any], run: dict[str, Any]) -> bool:
    """Same class (ignoring the module path) and the reported message's distinctive head
    appears in the message seen now (or the other way round, for a truncated report)."""
    if short_class(reported.get("exception", "")) != short_class(run.get("exception") or ""):
        return False
    want, seen = _normalized(reported.get("message", "")), _normalized(run.get("message") or "")
    if not want:
        return True
    head = want[:_DISTINCTIVE]
    return head in seen or (len(seen) >= 12 and seen[:_DISTINCTIVE] in want)


def classify(reported: dict[str, Any] | None, run: dict[str, Any]) -> str:
    """The verdict of one run against the reported error (`ReportedError.to_dict()` or None)."""
    outcome = run.get("outcome")
    kind = (reported or {}).get("kind")
    if outcome == "passed":
        return FIXED if kind else INCONCLUSIVE
    if kind == "hang":
        return REPRODUCES if outcome == "timeout" else DIFFERENT
    if kind == "segfault":
        return REPRODUCES if outcome == "crash" and _signal_number(run.get("signal")) == signals.SIGSEGV else DIFFERENT
    if outcome == "timeout":
        return DIFFERENT if kind else INCONCLUSIVE
    if outcome == "error" and short_class(run.get("exception") or "") in _IMPORT_ERRORS and not (
            kind == "exception" and short_class((reported or {}).get("exception", "")) in _IMPORT_ERRORS):
        return MISSING_DEPENDENCY
    if kind is None:
        return REPRODUCES
    return REPRODUCES if outcome == "error" and same_exception(reported or {}, run) else DIFFERENT


def _signal_number(value: Any) -> int | None:
    """A run's signal as a number, whether stored as 11 or as "SIGSEGV"."""
    if isinstance(value, str):
        try:
            return int(signals.Signals[value])
        except KeyError:
            return None
    return value


def describe(run: dict[str, Any]) -> str:
    """One line for a person: `ValueError: bad`, `killed by SIGSEGV`, `timed out after 3 s`."""
    outcome = run.get("outcome")
    if outcome == "error":
        return f"{run.get('exception')}: {run.get('message')}".rstrip(": ")
    if outcome == "crash":
        number = _signal_number(run.get("signal"))
        try:
            name = signals.Signals(number).name if number else f"exit code {run.get('exit_code')}"
        except ValueError:
            name = f"signal {number}"
        return f"killed by {name}"
    if outcome == "timeout":
        return f"timed out after {run.get('timeout_s') or run.get('duration_s')} s"
    return "passed"


def missing_module(run: dict[str, Any]) -> str | None:
    """`transformers` from "No module named 'transformers.models'"."""
    found = re.search(r"No module named '([\w.]+)'", run.get("message") or "")
    return found.group(1).split(".")[0] if found else None


def describe_reported(reported: dict[str, Any] | None) -> str:
    if not reported:
        return "no error reported"
    kind = reported.get("kind")
    if kind == "segfault":
        return "a segmentation fault"
    if kind == "hang":
        return "a hang"
    return reported.get("expect") or f"{reported.get('exception')}: {reported.get('message')}".rstrip(": ")


def flaky_ratio(verdicts: list[str]) -> str | None:
    """`"2/5"` when the runs disagree on reproducing, else None (deterministic)."""
    hits = sum(v == REPRODUCES for v in verdicts)
    return f"{hits}/{len(verdicts)}" if 0 < hits < len(verdicts) else None
