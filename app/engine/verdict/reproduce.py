"""Run a repro and say what happened: outcome, exception, signature; over N runs, the rate.

Outcomes (seed 001 step 5):
- `passed`: exit code 0;
- `error`: a Python exception (non-zero exit; `MemoryError` included);
- `crash`: killed by a signal: exit > 128 or negative; 139 = SIGSEGV, 137 = SIGKILL (also what
  the kernel's OOM killer sends); the signature is faulthandler's `Fatal Python error: ...`
  line if printed, else the signal;
- `timeout`: the wall-clock limit passed, or the CPU-time limit did (SIGXCPU).

Over several runs, a run "fails" when its outcome is not `passed`, or, given an expected
error, when it matches it (`same`). The reported run is the first one with the most common
failing signature (or the last run when none failed).
"""

from __future__ import annotations

import logging
import signal as signal_module
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from app.engine.sandbox.environments import probe_interpreter
from app.engine.verdict.flaky import SequentialRule, Verdict, estimate, verdict_of
from app.engine.sandbox.forkserver import ForkServer, ZygoteDied
from app.engine.sandbox.runner import ProcessResult, Sandbox, SandboxSpec
from app.engine.verdict.signature import (ExpectedError, MatchOutcome, Signature, match, parse_expected,
                                  parse_traceback, signal_name, signal_signature)

log = logging.getLogger(__name__)
Outcome = Literal["error", "passed", "timeout", "crash"]
OUTPUT_TAIL_CHARS = 64 * 1024
FORK_SERVER_MIN_RUNS = 3  # below this, a cold start is cheaper than starting a zygote


@dataclass(frozen=True)
class RunResult:
    """One run, classified."""

    outcome: Outcome
    exception: str | None
    message: str | None
    signature: str | None
    exit_code: int | None
    signal: str | None
    duration_s: float
    python: str
    torch_version: str | None
    output_tail: str
    mode: str
    parsed: Signature | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("parsed")
        return data


@dataclass(frozen=True)
class ReproResult(RunResult):
    """The representative run plus the counts over all runs (what `scrub repro --json` prints)."""

    runs: int = 1
    failures: int = 0
    rate: float = 0.0
    interval: tuple[float, float] = (0.0, 1.0)
    verdict: Verdict = "passes"
    match: MatchOutcome | None = None
    run_outcomes: tuple[Outcome, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data["interval"] = list(self.interval)
        data["run_outcomes"] = list(self.run_outcomes)
        return data


def read_process(process: ProcessResult, *, python: str, torch_version: str | None) -> RunResult:
    """Turn how a process ended into an outcome and a signature."""
    tail = process.output.tail_text(OUTPUT_TAIL_CHARS)
    parsed = parse_traceback(tail)
    signum = process.signal
    if process.timed_out or signum == signal_module.SIGXCPU:
        outcome: Outcome = "timeout"
        parsed = None
    elif signum is not None:
        outcome = "crash"
        parsed = parsed if parsed is not None and parsed.kind == "fatal" else signal_signature(signum)
        parsed = replace(parsed, signal=signal_name(signum))
    elif process.exit_code == 0:
        outcome, parsed = "passed", None
    else:
        outcome = "error"
        if parsed is None:
            parsed = Signature("SystemExit", str(process.exit_code), f"SystemExit: {process.exit_code}")
    return RunResult(
        outcome=outcome,
        exception=parsed.exception if parsed else None,
        message=parsed.message if parsed else None,
        signature=parsed.text if parsed else None,
        exit_code=process.exit_code,
        signal=signal_name(signum) if signum is not None else None,
        duration_s=round(process.duration_s, 4),
        python=python,
        torch_version=torch_version,
        output_tail=process.output.text()[-OUTPUT_TAIL_CHARS:],
        mode=process.mode,
        parsed=parsed,
    )


_HANG_WORDS = ("timeout", "timed out", "hang", "hangs", "deadlock")


def match_run(run: RunResult, expected: ExpectedError) -> MatchOutcome:
    """`match` for a classified run; a timeout is `same` only when a hang was expected."""
    if run.outcome == "passed":
        return "passes"
    if run.outcome == "timeout":
        hang = expected.exception is None and expected.message.strip().lower() in _HANG_WORDS
        return "same" if hang else "different"
    return match(run.parsed, expected)


def is_failure(run: RunResult, expected: ExpectedError | None) -> bool:
    """Without an expectation any non-passing run fails; with one, only a `same` run does."""
    if expected is None:
        return run.outcome != "passed"
    return match_run(run, expected) == "same"


def reproduce(source: str, spec: SandboxSpec, *, timeout_s: float, runs: int = 1,
              adaptive: bool = False, rule: SequentialRule | None = None,
              expect: str | ExpectedError | None = None, trusted: bool = False,
              server: ForkServer | None = None, use_fork_server: bool | None = None,
              on_run: Callable[[int, RunResult], None] | None = None) -> ReproResult:
    """Run `source` `runs` times (or adaptively, per `rule`) and aggregate.

    `server`: an already started fork server to use; otherwise one is started when there
    are at least `FORK_SERVER_MIN_RUNS` runs (or `use_fork_server=True`), and single runs go
    cold. `on_run(index, result)` reports progress.
    """
    expected = parse_expected(expect) if isinstance(expect, str) else expect
    rule = rule or SequentialRule()
    budget = rule.max_runs if adaptive else max(1, runs)
    interpreter = probe_interpreter(spec.python)
    want_server = use_fork_server if use_fork_server is not None else budget >= FORK_SERVER_MIN_RUNS
    owned = None
    if server is None and want_server:
        owned = ForkServer(spec, jobs=1, trusted=trusted)
        try:
            owned.start()
            server = owned
        except ZygoteDied as exc:  # e.g. the interpreter has no torch: run cold instead
            log.warning("fork server did not start (%s); running cold", exc)
            owned = None
    sandbox = Sandbox(spec)
    results: list[RunResult] = []
    try:
        while len(results) < budget:
            if server is not None:
                process = server.run(source, timeout_s=timeout_s)
            else:
                process = sandbox.run(source, timeout_s=timeout_s, trusted=trusted)
            run = read_process(process, python=interpreter.python_version, torch_version=interpreter.torch_version)
            results.append(run)
            if on_run:
                on_run(len(results) - 1, run)
            failures = sum(is_failure(r, expected) for r in results)
            if adaptive and rule.decide(failures, len(results)) is not None:
                break
    finally:
        if owned is not None:
            owned.close()
    return aggregate(results, expected, rule if adaptive else None)


def aggregate(results: list[RunResult], expected: ExpectedError | None,
              rule: SequentialRule | None = None) -> ReproResult:
    """Counts, rate, interval, verdict and the representative run of `results`."""
    failing = [r for r in results if is_failure(r, expected)]
    if failing:
        common, _ = Counter(r.signature or r.outcome for r in failing).most_common(1)[0]
        representative = next(r for r in failing if (r.signature or r.outcome) == common)
    else:
        representative = results[-1]
    counts = estimate(len(failing), len(results))
    verdict = (rule.decide(counts.failures, counts.runs) if rule else None) or verdict_of(counts.failures, counts.runs)
    fields = {name: getattr(representative, name) for name in RunResult.__dataclass_fields__}
    return ReproResult(
        **fields,
        runs=counts.runs, failures=counts.failures, rate=round(counts.rate, 4),
        interval=(round(counts.interval[0], 4), round(counts.interval[1], 4)),
        verdict=verdict,
        match=match_run(representative, expected) if expected else None,
        run_outcomes=tuple(r.outcome for r in results),
    )
