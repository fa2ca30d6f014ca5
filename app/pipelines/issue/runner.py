"""The issue pipeline's code-running steps, over the sandbox/reproduce/minimize engine.

Three calls, each returning plain JSON-ready data a stage can store:

- `reproduce(settings, source, reported, label)`: run the repro in the sandbox on the
  environment `label`, repeat to tell deterministic from flaky, and give the verdict against
  the reported error (`app.engine.verdict.classify`).
- `probe(settings, source, reported, label) -> bool`: one run; does it reproduce there?
  (the bisection probe).
- `minimize_repro(settings, source, label)`: shrink while it fails with the same signature
  (`app.engine.minimize.session`); None when nothing smaller was found.

Settings are read here (the pipeline layer), never in the engine.
"""

from __future__ import annotations

import os
from typing import Any

from app.engine.verdict import classify as verdicts
from app.engine.sandbox.environments import InterpreterError, probe_interpreter
from app.engine.verdict.reproduce import classify as classify_process
from app.engine.sandbox.runner import Limits, SandboxSpec, run_sandboxed

Json = dict[str, Any]
FIRST_RUNS = 3  # runs that agree -> deterministic (the seed: 3-5 runs)
MAX_RUNS = 5  # the seed: "run 3-5 times to assess flakiness"
OUTPUT_KEEP = 4000  # characters of the repro's output kept in the stage record
MINIMIZE_TIMEOUT_S = 60.0  # the seed: "a shorter timeout (30-60 seconds) during minimization"
MINIMIZE_BUDGET_S = 300.0


def current_label(settings: Any) -> str:
    """`SCRUB_ENVIRONMENTS` lists environments oldest first: the last one is "now"."""
    return list(settings.environment_map)[-1]


def _spec(settings: Any, label: str) -> SandboxSpec:
    return SandboxSpec(
        kind=settings.resolved_sandbox,
        python=settings.environment_map[label],
        limits=Limits(memory_mb=settings.sandbox_memory_mb),
        gpu=bool(settings.gpu),
        threads=1,
        env={"PYTHONHASHSEED": "0"},
    )


def run_once(settings: Any, source: str, label: str, timeout_s: float | None = None) -> Json:
    """One cold sandboxed run, classified by `app.engine.verdict.reproduce` (outcome, exception,
    message, signature, signal name, versions, output tail)."""
    timeout = timeout_s or settings.repro_timeout
    spec = _spec(settings, label)
    process = run_sandboxed(source, spec, timeout_s=timeout)
    run = classify_process(process, python=spec.python, torch_version=_torch_version(spec.python))
    return run.to_dict() | {"environment": label, "timeout_s": timeout, "output_tail": run.output_tail[-OUTPUT_KEEP:]}


def _torch_version(python: str) -> str | None:
    try:
        return probe_interpreter(python).torch_version
    except InterpreterError:
        return None


def reproduce(settings: Any, source: str, reported: Json | None, label: str | None = None) -> Json:
    """Run until the verdict is settled: 3 agreeing runs, or up to 5 when they disagree.

    A timeout is not repeated (it already cost the whole timeout). The verdict of a flaky
    repro is `reproduces` with a `flaky_ratio`.
    """
    label = label or current_label(settings)
    runs = [run_once(settings, source, label)]
    seen = [verdicts.classify(reported, runs[0])]
    while runs[0]["outcome"] != "timeout" and len(runs) < MAX_RUNS:
        if len(runs) >= FIRST_RUNS and len(set(seen)) == 1:
            break
        runs.append(run_once(settings, source, label))
        seen.append(verdicts.classify(reported, runs[-1]))
    ratio = verdicts.flaky_ratio(seen)
    verdict = verdicts.REPRODUCES if ratio else max(set(seen), key=seen.count)
    first = next(r for r, v in zip(runs, seen) if v == verdict)
    return {
        "verdict": verdict,
        "flaky_ratio": ratio,
        "runs": len(runs),
        "reproduced": seen.count(verdicts.REPRODUCES),
        "outcomes": _counts(r["outcome"] for r in runs),  # each sandboxed run's outcome (for /metrics)
        "result": first,
        "description": verdicts.describe(first),
    }


def _counts(values: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[str(value)] = counts.get(str(value), 0) + 1
    return counts


def probe(settings: Any, source: str, reported: Json | None, label: str) -> bool:
    return verdicts.classify(reported, run_once(settings, source, label)) == verdicts.REPRODUCES


def minimize_repro(settings: Any, source: str, label: str) -> Json | None:
    """Shrink `source` while it fails with the same signature (fork server for candidates, a cold
    re-check of the result). None when nothing smaller was found or the result does not hold."""
    from app.engine.minimize import code_lines
    from app.engine.minimize.problem import CouldNotMinimize
    from app.engine.minimize.runners import sandbox_runners, zygote_for
    from app.engine.minimize.session import NothingToKeep
    from app.engine.minimize.session import minimize_repro as shrink

    spec = _spec(settings, label)
    jobs = max(1, min(2, os.cpu_count() or 1))
    cold, warm, close = sandbox_runners(spec.python, jobs, spec, zygote=zygote_for(source))
    try:
        outcome = shrink(source, run=warm, cold_run=cold, jobs=jobs,
                         timeout_s=min(settings.repro_timeout, MINIMIZE_TIMEOUT_S), budget_s=MINIMIZE_BUDGET_S)
    except (CouldNotMinimize, NothingToKeep):
        return None
    finally:
        close()
    result = outcome.result
    if not outcome.reproduces or code_lines(result.source) >= code_lines(source):
        return None
    return {
        "source": result.source,
        "original_lines": code_lines(source),
        "final_lines": code_lines(result.source),
        "candidates": result.stats.candidates,
        "wall_s": round(result.wall_s, 3),
        "timed_out": result.timed_out,
    }
