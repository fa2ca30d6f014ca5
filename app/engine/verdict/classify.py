"""Reported error + what a run did -> the issue's verdict (seed `001` step 5).

The seed's three outcomes, plus what an unattended service must add:

- `reproduces`: the same error as reported: same exception class and a distinctive part of
  the message (the message alone when the report quotes it without its class); a hang
  reported and a timeout; a crash reported and the run killed by one of its signals (SIGSEGV
  for a segfault, SIGABRT for an abort, SIGFPE, SIGBUS; any of SIGABRT/SIGSEGV/SIGBUS for heap
  corruption).
- `fixed`: the run passes although an error was reported.
- `different-error`: it fails, but not the way the issue says.
- `missing-dependency`: it stops at an import of a package the worker does not have (the
  seed: ask rather than install), unless an import error is the reported bug.
- `inconclusive`: nothing to compare with (no reported error and a clean run, or a timeout
  nobody reported): Scrubbot cannot tell, and says so instead of closing the issue.

With no reported error, only the script's own check failing counts as reproducing (its
`assert`, its "BUG" print, its exit code); any other failure is `inconclusive`, with the
evidence ("fails with X now"). Crashes and hangs reproduce only when the report describes one.

A run is a plain dict: `outcome` (`error`, `passed`, `timeout`, `crash`), `exception`,
`message`, `signal` — the shape `scrub repro --json` prints.
"""

from __future__ import annotations

import re
import signal as signals
from typing import Any

from app.domain import Verdict
from app.engine.verdict.normalize import normalize_text
from app.engine.verdict.script import ScriptFacts, own_check_failed, says
from app.engine.verdict.signature import WRAPPER_CLASSES, parse_chain, short_class, traceback_frames
from app.engine.verdict.stopped import missing_module, stopped_by  # noqa: F401 - missing_module: re-exported
from app.engine.verdict.values import StatedValues, compare

# The verdict words are the domain's (`app.domain.Verdict`); these names are kept for the engine's callers.
REPRODUCES, FIXED, DIFFERENT, INCONCLUSIVE = Verdict.reproduces, Verdict.fixed, Verdict.different_error, Verdict.inconclusive
# It passes now, but nothing witnesses that this script ever showed the bug: no close.
PASSES_NOW = Verdict.passes_now
MISSING_DEPENDENCY = Verdict.missing_dependency
UNAVAILABLE_HARDWARE = Verdict.unavailable_hardware
NEEDS_REPRODUCTION = Verdict.needs_reproduction
# The run stopped because the worker has no GPU: nothing is known about the bug.
_DISTINCTIVE = 40  # characters of the reported message that must match (seed: "a distinctive substring")



def _normalized(message: str) -> str:
    return normalize_text(message or "").lower()


_NESTED = re.compile(r"^\s*(?P<name>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Failure|Failed|Unsupported))"
                     r"(?::\s*(?P<message>.*))?$", re.DOTALL)


_RAISED = re.compile(r"\braised:\s*")


def exception_levels(exception: str | None, message: str | None) -> list[tuple[str, str]]:
    """`Outer: Inner: msg` -> [(Outer, "Inner: msg"), (Inner, "msg")], classes without modules.

    Dynamo and Inductor wrap the error that matters (`InductorError: AssertionError: ...`,
    `BackendCompilerFailed: backend='inductor' raised: RuntimeError: ...`); a report may quote
    either level, and the run may be read at either: every level is a candidate for a match.
    """
    levels: list[tuple[str, str]] = []
    name, text = exception or "", message or ""
    while name and len(levels) < 6:
        levels.append((short_class(name), text))
        inner = (_NESTED.match(text) or _NESTED.match(_RAISED.split(text, 1)[-1])) if text else None
        if inner is None or inner.group("name") == name:
            break
        name, text = inner.group("name"), (inner.group("message") or "")
    return levels


def _run_levels(run: dict[str, Any]) -> list[tuple[str, str]]:
    levels = exception_levels(run.get("exception"), run.get("message"))
    for info in parse_chain(run.get("output_tail") or ""):  # the wrappers the signature unwrapped
        levels += [level for level in exception_levels(info.name, info.message) if level not in levels]
    return levels


_ASSERT_FILE = re.compile(r"internal assert failed(?: at \"?(?:[^\s\":]*[\\/])?(?P<file>[^\s\"\\/:]+))?")


def _messages_match(want: str, seen: str) -> bool:
    want, seen = _normalized(want), _normalized(seen)
    if not want:
        return True
    wanted_assert = _ASSERT_FILE.search(want)
    if wanted_assert:  # PyTorch's internal asserts: the phrase and the source file, not line numbers
        seen_assert = _ASSERT_FILE.search(seen)
        return bool(seen_assert) and (not wanted_assert.group("file") or not seen_assert.group("file")
                                      or wanted_assert.group("file") == seen_assert.group("file"))
    head = want[:_DISTINCTIVE]
    return head in seen or (len(seen) >= 12 and seen[:_DISTINCTIVE] in want)


def same_exception(reported: dict[str, Any], run: dict[str, Any]) -> bool:
    """The same error at some level of the two exception chains: same class (ignoring the module
    path) and the reported message's distinctive head in the message seen now (or the other way
    round, for a truncated report). A match on a wrapper class alone (`InductorError` vs
    `InductorError`) needs the wrapped errors to agree too."""
    seen = _run_levels(run)
    if not reported.get("exception"):  # a message quoted without its class: the message decides
        want = reported.get("message") or ""
        return len(_normalized(want)) >= 20 and any(_messages_match(want, message) for _, message in seen)
    wanted = exception_levels(reported.get("exception"), reported.get("message"))
    for i, (want_class, want_message) in enumerate(wanted):
        for j, (seen_class, seen_message) in enumerate(seen):
            if want_class != seen_class or not _messages_match(want_message, seen_message):
                continue
            wrapper_only = want_class in WRAPPER_CLASSES and i + 1 < len(wanted) and j + 1 < len(seen)
            if not wrapper_only or same_exception(dict(zip(("exception", "message"), wanted[i + 1])),
                                                  {"exception": seen[j + 1][0], "message": seen[j + 1][1]}):
                return True
    return False


def classify(reported: dict[str, Any] | None, run: dict[str, Any], *, self_checking: bool = False,
             expected_exception: str | None = None, script: ScriptFacts | None = None,
             values: StatedValues | None = None, source: str = "") -> str:
    """The verdict of one run against the reported failure (`ReportedError.to_dict()` or None).

    "Reproduces" needs a match with what the report describes: the reported exception (at
    the statement it was reported at, for a bare `AssertionError`), a crash or a hang only
    when one was reported, the stated wrong value printed (`values`), or the script's own
    check failing (`script`: its `assert`, its "BUG" print, an exit code the report names).
    A failure that matches nothing reported is `inconclusive` ("fails with X now"), never
    "reproduces".

    `self_checking`: the repro checks its own result, so a clean run with no reported error
    means the bug is gone (the witness rule decides whether that may close the issue).
    A run that prints the reported error and then goes on (the script caught it) is read as
    that error. `expected_exception`: what the report says should happen instead (a fuzzer's
    "a RuntimeError to be thrown" for a segfault): a run raising exactly that is fixed.
    """
    outcome = run.get("outcome")
    if quoted_only(reported):  # a message without its class: it can only show the bug, never its absence
        if outcome in ("error", "passed") and (same_exception(reported, run) or printed_reported_error(reported, run)):
            return REPRODUCES
        reported = None
    kind = (reported or {}).get("kind")
    facts = script or ScriptFacts(self_checking=self_checking)
    output = run.get("output_tail") or ""
    if kind == "exception" and outcome in ("passed", "error") and printed_reported_error(reported or {}, run):
        return REPRODUCES
    said = says(facts, output) if outcome in ("passed", "error") else None
    if said == "bug" and _own_exit(run, facts, passed_too=True):
        return REPRODUCES
    if values is not None and outcome == "passed":
        shown = compare(output, values, source)
        if shown == "actual":
            return REPRODUCES
        if shown == "expected":
            return FIXED
    if outcome == "passed":
        return FIXED if kind or self_checking or facts.self_checking or values is not None else INCONCLUSIVE
    # The environment stopped the run before the bug could show, whatever the report describes.
    if outcome == "error" and (stop := stopped_by(run, source)) and not (
            kind == "exception" and (same_exception(reported or {}, run) or stopped_by(_as_run(reported or {}), source))):
        return stop
    if (kind in ("segfault", "crash", "hang") and outcome == "error" and expected_exception
            and short_class(run.get("exception") or "") == short_class(expected_exception)):
        return FIXED
    if kind == "hang":
        return REPRODUCES if outcome == "timeout" else DIFFERENT
    if kind in ("segfault", "crash"):
        return REPRODUCES if outcome == "crash" and _signal_number(run.get("signal")) in crash_signals(reported) else DIFFERENT
    if outcome == "timeout":  # no hang was reported: a timeout is no error, and says nothing of the bug
        return INCONCLUSIVE
    if _own_exit(run, facts):  # the script exited with a code it gives on purpose
        if kind == "exit":
            return REPRODUCES if run.get("exit_code") == (reported or {}).get("exit_code") else DIFFERENT
        return FIXED if said == "ok" else INCONCLUSIVE  # what the code means is the script's to say
    if kind == "exit":
        return DIFFERENT
    if kind is None:
        own = outcome == "error" and (self_checking or facts.self_checking) and own_check_failed(output)
        return REPRODUCES if own else INCONCLUSIVE
    if outcome == "error" and same_exception(reported or {}, run) and _same_statement(reported or {}, run):
        return REPRODUCES
    return DIFFERENT


def _as_run(reported: dict[str, Any]) -> dict[str, Any]:
    """A reported exception read as a run that raised it (is the report itself about a missing GPU?)."""
    return {"outcome": "error", "exception": reported.get("exception"), "message": reported.get("message")}


def quoted_only(reported: dict[str, Any] | None) -> bool:
    """The report quotes a message without its class (a comment under the last call): a run
    raising it reproduces, but a pass or another failure is read as if nothing were reported,
    since the comment may be a paraphrase or a remark."""
    return bool(reported) and reported.get("kind") == "exception" and not reported.get("exception")


def _own_exit(run: dict[str, Any], facts: ScriptFacts, *, passed_too: bool = False) -> bool:
    """The run ended through the script's own `sys.exit(N)` (no traceback): N is one of the
    codes it gives on purpose (with `passed_too`, a clean exit counts as well)."""
    if passed_too and run.get("outcome") == "passed":
        return True
    return (run.get("outcome") == "error" and run.get("exception") == "SystemExit"
            and run.get("exit_code") in facts.exit_codes)


def _same_statement(reported: dict[str, Any], run: dict[str, Any]) -> bool:
    """A bare `AssertionError` is only the reported one at the statement it was reported at,
    when the report shows that statement and the run's traceback shows its own."""
    if short_class(reported.get("exception") or "") != "AssertionError" or not reported.get("line"):
        return True
    frames = [f for f in traceback_frames(run.get("output_tail") or "") if f.path.endswith("repro.py")]
    if not frames or not frames[-1].code:
        return True
    return _squash(frames[-1].code) == _squash(reported["line"])


def _squash(code: str) -> str:
    return re.sub(r"\s+", "", code)


def printed_reported_error(reported: dict[str, Any], run: dict[str, Any]) -> bool:
    """The run's output shows the reported error although the process did not end with it:
    the script caught it (`except Exception as e: print(e)`) and went on or died of something
    else. Only a distinctive message counts (at least 20 characters), so a generic message
    such as "CUDA error" printed in passing does not."""
    if same_exception(reported, run):
        return False
    want = _normalized(reported.get("message", ""))[:_DISTINCTIVE]
    if len(want) < 20:
        return False
    output = _normalized(run.get("output_tail") or "")
    if run.get("outcome") == "error":  # not the traceback the run ended with
        output = output.split("traceback (most recent call last)")[0]
    return want in output


def crash_signals(reported: dict[str, Any] | None) -> set[int]:
    """The signal numbers a reported crash may die of: SIGSEGV for a segfault, the named ones
    for a `crash`."""
    reported = reported or {}
    if reported.get("kind") == "segfault":
        return {int(signals.SIGSEGV)}
    return {number for name in reported.get("signals") or () if (number := _signal_number(name)) is not None}


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


def describe_reported(reported: dict[str, Any] | None) -> str:
    if not reported:
        return "no error reported"
    kind = reported.get("kind")
    if kind == "segfault":
        return "a segmentation fault"
    if kind == "crash":
        names = list(reported.get("signals") or ())
        return "a crash (" + (" or ".join(names) if len(names) <= 2 else ", ".join(names[:-1]) + " or " + names[-1]) + ")"
    if kind == "hang":
        return "a hang"
    return reported.get("expect") or f"{reported.get('exception')}: {reported.get('message')}".rstrip(": ")


def flaky_ratio(verdicts: list[str]) -> str | None:
    """`"2/5"` when the runs disagree on reproducing, else None (deterministic)."""
    hits = sum(v == REPRODUCES for v in verdicts)
    return f"{hits}/{len(verdicts)}" if 0 < hits < len(verdicts) else None
