"""Minimize a repro end to end: find the failure to keep, shrink, re-check the result cold.

    outcome = minimize_repro(source, run=fork_server.run, cold_run=sandbox.run, jobs=2)

`run(source, timeout_s)` judges candidates (a fork server with torch preloaded: tens of ms per
candidate); `cold_run` is a fresh sandboxed interpreter, used once on the original (when no
signature is given) and once on the result, so what is reported does not depend on the
fork server's shared state.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from app.engine.minimize.crashes import crash_family
from app.engine.minimize.driver import MinimizeResult, Progress, minimize
from app.engine.minimize.oracle import (
    FailureSignature,
    Run,
    SignatureOracle,
    signature_of,
)
from app.engine.minimize.probe import probed
from app.engine.minimize.problem import CouldNotMinimize, check_size
from app.engine.minimize.seeds import without_seeds
from app.engine.minimize.size import tidy
from app.engine.minimize.steadiness import latest_holding
from app.engine.verdict.signature import mask_digits

log = logging.getLogger(__name__)


class NothingToKeep(ValueError):
    """The original program does not fail, so there is no failure to preserve."""


@dataclass
class ReproMinimization:
    result: MinimizeResult
    signature: FailureSignature
    reproduces: bool  # the minimized program, run cold, fails with `signature`


def parse_expected(text: str) -> FailureSignature:
    """`--expect`: "timeout", "signal 11", or "ExceptionClass: part of the message" (optional)."""
    text = text.strip()
    if text == "timeout":
        return FailureSignature("timeout")
    signal = re.fullmatch(r"signal\s+(\d+)", text)
    if signal:
        code = int(signal.group(1))
        return FailureSignature("signal", code=code, message=crash_family(code, ""))
    exc_type, _, message = text.partition(":")
    return FailureSignature("exception", exc_type.strip(), mask_digits(message.strip()), partial=True)


def original_signature(source: str, cold_run: Run, timeout_s: float) -> FailureSignature:
    """How the unmodified `source` fails (run with the `probe`, as every candidate is)."""
    signature = signature_of(cold_run(probed(source), timeout_s), source)
    if signature is None:
        raise NothingToKeep("the program runs without error: there is no failure to keep")
    return signature


def minimize_repro(
    source: str,
    *,
    run: Run,
    cold_run: Run,
    expected: FailureSignature | None = None,
    jobs: int = 1,
    timeout_s: float = 30.0,
    budget_s: float | None = None,
    max_candidates: int | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> ReproMinimization:
    """Shrink `source` while it keeps failing as it does now (or as `expected` says).

    `budget_s` counts from this call: the cold run of the original comes out of it. (The cold
    re-check of the result comes after it: one run.) `max_candidates` caps the warm runs
    instead (or as well): a budget that gives the same result on a loaded machine.
    """
    started = time.monotonic()
    check_size(source)  # `TooLarge` before anything runs
    signature = expected or original_signature(source, cold_run, timeout_s)
    deadline = None if budget_s is None else started + budget_s
    oracle = SignatureOracle(run, signature, timeout_s=timeout_s, jobs=jobs, deadline=deadline, confirm=True)

    def remaining() -> float | None:
        return None if budget_s is None else max(0.0, budget_s - (time.monotonic() - started))

    try:
        try:
            result = minimize(source, oracle, jobs=jobs, budget_s=remaining(), max_candidates=max_candidates,
                              progress=progress, holds=holds_for(oracle), keep_seed=True)
        except CouldNotMinimize:  # once more: a loaded machine can fail a first warm run
            result = minimize(source, oracle, jobs=jobs, budget_s=remaining(), max_candidates=max_candidates,
                              progress=progress, holds=holds_for(oracle), keep_seed=True)
        result = unseeded(steady(result, oracle), signature, oracle)
    finally:
        oracle.close()
    reproduces = signature.matches(signature_of(cold_run(probed(result.source), timeout_s), result.source))
    return ReproMinimization(result, signature, reproduces)


STEADY_RUNS = 2  # oracle verdicts (each confirmed: two runs) the result must get, once more


def steady(result: MinimizeResult, oracle: Callable[[list[str]], list[bool]]) -> MinimizeResult:
    """The result, or the latest accepted program before it that fails as expected
    `STEADY_RUNS` more times in a row.

    The driver checks the same after every round (`steadiness`); this is the last check, on
    the program a budget may have stopped mid-round. A candidate is accepted on two runs; one
    that fails as expected on some random draws only (`rsqrt(x.pow(1).mean())`, NaN when the
    mean is negative; an overflow that needs |x| > 0.64) passes both about a quarter of the
    time, and every later program inherits it. Judged again here, such a result gives way to
    the latest program that holds, found by bisecting the accepted programs.
    """
    holds = holds_for(oracle)
    earlier = result.history[:-1]  # the accepted programs before the result, the original first
    if holds(result.source) or not earlier:
        return result
    good = latest_holding(earlier, holds)
    if good < 0:
        return result  # nothing held (the original itself is flaky): the cold re-check says so
    log.warning("the minimized program failed as expected only sometimes: kept the program "
                "accepted %d step(s) before it", len(earlier) - good)
    return replace(result, source=tidy(earlier[good]), steadied=len(earlier) - good)


def unseeded(result: MinimizeResult, signature: FailureSignature,
             oracle: Callable[[list[str]], list[bool]]) -> MinimizeResult:
    """The result without its seeding calls, if the failure is an exception (not a failing
    check, whose values come from the draws) and that still holds, twice over (`seeds`)."""
    if signature.kind != "exception" or signature.operations is not None:
        return result
    text = without_seeds(result.source)
    holds = holds_for(oracle)
    if text is None or not all(holds(text) for _ in range(2)):
        return result
    return replace(result, source=tidy(text))


def holds_for(oracle: Callable[[list[str]], list[bool]]) -> Callable[[str], bool]:
    """`holds(text)`: `STEADY_RUNS` more verdicts, all as expected, with no budget cutting a run
    short (a run cut short by the spent budget would only look unsteady)."""

    def holds(text: str) -> bool:
        deadline = getattr(oracle, "deadline", None)
        if deadline is not None:
            oracle.deadline = None
        try:
            return all(oracle([text])[0] for _ in range(STEADY_RUNS))
        finally:
            if deadline is not None:
                oracle.deadline = deadline

    return holds
