"""Rerunning a failing CI test: what one run says, and when enough runs have been seen.

One run of `pytest <node id>` ends in one of five outcomes (`outcome_of`):
`fail` (fails the way CI did: same exception class, or a timeout/signal when CI saw one),
`other` (fails differently), `pass`, `timeout` (ran past the per-run limit) and `error` (the
test could not run: not found, collection error, usage error).

The sequential test (`Sequential`) applies `CI_RERUN_RULE`, a `flaky.SequentialRule` with
error rates of 1%:
- one `pass` and one `fail` prove the test flaky; the runner keeps going to 10 runs so the
  rate has an interval worth quoting (Wilson score interval, 95%);
- 17 fails in a row say "deterministic": a flaky test failing at most 75% of the time does
  that with probability < 1%;
- 44 passes in a row say "not reproducible here": a test failing at least 10% of the time
  passes them all with probability < 1%. A CI job only opens for a failure already seen in
  two runs, so "passes here" must rule out typical flake rates, while "deterministic" only
  has to rule out the flaky range;
- two `error`s end it: the test cannot run here (the report quotes the output). Runs that
  fail `other`wise or time out are noted but do not count toward the rate.
The dispatch input `deterministic` is only a hint: the verdict comes from the runs, and the
report says whether the hint held.
"""

from __future__ import annotations

import re
import signal as signals
from dataclasses import dataclass, field

from app.domain import RerunVerdict
from app.engine.verdict.flaky import SequentialRule, wilson_interval
from app.engine.sandbox.runner import ProcessResult
from app.engine.verdict.signature import short_class
from app.runstate import RerunSummary

FAIL, OTHER, PASS, TIMEOUT, ERROR = "fail", "other", "pass", "timeout", "error"
DETERMINISTIC, FLAKY, NOT_REPRODUCIBLE, CANNOT_RUN = (RerunVerdict.deterministic, RerunVerdict.flaky,
                                                     RerunVerdict.not_reproducible, RerunVerdict.cannot_run)

_FAILED_LINE = re.compile(r"^(?:FAILED|ERROR) \S+ - (?P<msg>.+)$", re.MULTILINE)
_E_LINE = re.compile(r"^E\s+(?P<exc>[\w.]+(?:Error|Exception|Failure|Interrupt|Exit|Warning)\b)", re.MULTILINE)



def failure_line(output: str) -> str:
    """The `Exception: message` pytest printed for the first failure, or ''."""
    found = _FAILED_LINE.search(output)
    if found:
        return found.group("msg").strip()
    found = _E_LINE.search(output)
    return found.group("exc") if found else ""


def outcome_of(result: ProcessResult, *, exception: str = "", kind: str = "") -> str:
    """Classify one sandboxed `pytest <node>` run against the CI failure (`exception`, `kind`)."""
    if result.timed_out:
        return FAIL if kind == "timeout" else TIMEOUT
    code = result.exit_code
    if code == 0:
        return PASS
    if result.signal is not None:
        if kind == "signal":
            try:
                return FAIL if signals.Signals(result.signal).name == exception else OTHER
            except ValueError:
                return OTHER
        return OTHER
    if code != 1:  # 2 interrupted/collection error, 3 internal, 4 usage, 5 nothing collected
        return ERROR
    if not exception or kind in ("exit",) or exception in ("ExitCode", "Timeout"):
        return FAIL
    text = result.output.text()
    seen = failure_line(text)
    wanted = short_class(exception)
    if seen:
        return FAIL if re.search(rf"\b{re.escape(wanted)}\b", seen) else OTHER
    return FAIL if re.search(rf"\b{re.escape(wanted)}\b", text) else OTHER


# Stricter than a repro's default rule: a CI verdict opens a PR. 17 failures or 44 passes in a
# row decide (0.75^17 < 0.01, 0.90^44 < 0.01); a flaky test runs 10 times for its rate.
CI_RERUN_RULE = SequentialRule(alpha=0.01, beta=0.01, delta=0.25, pass_delta=0.10, flaky_min_runs=10, max_runs=60)


@dataclass
class Sequential:
    """Accumulates outcomes; `verdict()` is None while more runs are needed."""

    rule: SequentialRule = CI_RERUN_RULE
    outcomes: list[str] = field(default_factory=list)

    def add(self, outcome: str) -> None:
        self.outcomes.append(outcome)

    def count(self, outcome: str) -> int:
        return self.outcomes.count(outcome)

    @property
    def runs(self) -> int:
        """Runs that count for the rate: the ones that finished and ran the test."""
        return sum(1 for o in self.outcomes if o in (FAIL, OTHER, PASS))

    def verdict(self) -> str | None:
        fails, passes, errors = self.count(FAIL), self.count(PASS), self.count(ERROR)
        if errors >= 2:
            return CANNOT_RUN
        if fails and passes:
            return FLAKY if self.runs >= self.rule.flaky_min_runs else None
        if fails >= self.rule.runs_to_decide_deterministic and self.runs == fails:
            return DETERMINISTIC
        if fails == 0 and self.runs >= self.rule.runs_to_decide_passes:
            return NOT_REPRODUCIBLE
        if len(self.outcomes) >= self.rule.max_runs:
            return self.final_verdict()
        return None

    def final_verdict(self) -> str:
        """The best verdict the runs so far support (when time or the run cap is up)."""
        fails, passes = self.count(FAIL), self.count(PASS)
        if self.count(ERROR) and not (fails or passes):
            return CANNOT_RUN
        if fails and passes:
            return FLAKY
        if fails:
            return DETERMINISTIC  # fewer runs than the rule wants: the summary says how many
        return NOT_REPRODUCIBLE

    def summary(self) -> RerunSummary:
        """The typed summary the CI job keeps (`CIState.rerun`) and the status page reads."""
        fails = self.count(FAIL)
        low, high = wilson_interval(fails, self.runs)
        return RerunSummary(runs=self.runs, failures=fails, other_failures=self.count(OTHER),
                            timeouts=self.count(TIMEOUT), errors=self.count(ERROR),
                            rate=round(fails / self.runs, 4) if self.runs else 0.0,
                            interval=[round(low, 4), round(high, 4)])
