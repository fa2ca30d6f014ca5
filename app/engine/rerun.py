"""Rerunning a failing CI test: what one run says, and when enough runs have been seen.

One run of `pytest <node id>` ends in one of five outcomes (`outcome_of`):
`fail` (fails the way CI did: same exception class, or a timeout/signal when CI saw one),
`other` (fails differently), `pass`, `timeout` (ran past the per-run limit) and `error` (the
test could not run: not found, collection error, usage error).

The sequential test (`Sequential`) stops as early as the evidence allows, with error rates
bounded by `alpha` (default 1%):
- one `pass` and one `fail` prove the test flaky; the runner keeps going to `min_runs` so
  the rate has an interval worth quoting (Wilson score interval, 95%);
- `n` fails in a row say "deterministic" once a flaky test failing at most `p_high` of the
  time (default 75%) would do that with probability < alpha: n = ceil(ln alpha / ln p_high)
  (17 runs);
- `n` passes in a row say "not reproducible here" once a test failing at least `p_low` of the
  time (default 10%) would pass them all with probability < alpha: n = ceil(ln alpha /
  ln(1 - p_low)) (44 runs);
- two `error`s end it: the test cannot run here (the report quotes the output).
The dispatch input `deterministic` is only a hint: the verdict comes from the runs, and the
report says whether the hint held.

Why not `flaky.SequentialRule` (one `delta` for both sides, alpha = beta = 5%)? A CI job
only opens for a failure already seen in two runs, so "passes here" must rule out low rates
(10%, a typical flake) while "deterministic" only has to rule out the flaky range; and the
runs here are test processes that also end in `other`/`timeout`/`error`. The interval is
`flaky.wilson_interval`.
"""

from __future__ import annotations

import math
import re
import signal as signals
from dataclasses import dataclass, field

from app.engine.flaky import wilson_interval
from app.engine.sandbox import ProcessResult

FAIL, OTHER, PASS, TIMEOUT, ERROR = "fail", "other", "pass", "timeout", "error"
DETERMINISTIC, FLAKY, NOT_REPRODUCIBLE, CANNOT_RUN = "deterministic", "flaky", "not_reproducible", "cannot_run"

_FAILED_LINE = re.compile(r"^(?:FAILED|ERROR) \S+ - (?P<msg>.+)$", re.MULTILINE)
_E_LINE = re.compile(r"^E\s+(?P<exc>[\w.]+(?:Error|Exception|Failure|Interrupt|Exit|Warning)\b)", re.MULTILINE)


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


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
    wanted = _short(exception)
    if seen:
        return FAIL if re.search(rf"\b{re.escape(wanted)}\b", seen) else OTHER
    return FAIL if re.search(rf"\b{re.escape(wanted)}\b", text) else OTHER


@dataclass(frozen=True)
class RerunPolicy:
    alpha: float = 0.01
    p_high: float = 0.75
    p_low: float = 0.10
    min_runs: int = 10
    max_runs: int = 60

    @property
    def deterministic_after(self) -> int:
        return math.ceil(math.log(self.alpha) / math.log(self.p_high))

    @property
    def absent_after(self) -> int:
        return math.ceil(math.log(self.alpha) / math.log(1 - self.p_low))


@dataclass
class Sequential:
    """Accumulates outcomes; `verdict()` is None while more runs are needed."""

    rule: RerunPolicy = field(default_factory=RerunPolicy)
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
            return FLAKY if self.runs >= self.rule.min_runs else None
        if fails >= self.rule.deterministic_after and self.runs == fails:
            return DETERMINISTIC
        if fails == 0 and self.runs >= self.rule.absent_after:
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

    def summary(self) -> dict:
        fails = self.count(FAIL)
        low, high = wilson_interval(fails, self.runs)
        return {
            "runs": self.runs,
            "failures": fails,
            "other_failures": self.count(OTHER),
            "timeouts": self.count(TIMEOUT),
            "errors": self.count(ERROR),
            "rate": round(fails / self.runs, 4) if self.runs else 0.0,
            "interval": [round(low, 4), round(high, 4)],
        }
