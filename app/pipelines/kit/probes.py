"""A repro's runs on a build named by its interpreter, not by a `SCRUB_ENVIRONMENTS` label.

Nightlies and single-commit builds are environments made on demand (`app.pipelines.kit.builds`),
so their runs go through here: `run_on(settings, python, source)` is one cold sandboxed run read
as the issue kind reads its runs (outcome, exception, message, signature), and `probe_on` is the
bisection probe of `app.engine.verdict.bisect_probe`: it reproduces at the first reproducing
run, is absent after the plan's clean runs (sized to the measured failure rate), and could not
be tested after any other outcome.
"""

from __future__ import annotations

from typing import Any

from app.engine.sandbox.environments import InterpreterError, probe_interpreter
from app.engine.sandbox.runner import Limits, SandboxSpec, run_sandboxed
from app.engine.verdict import bisect_probe
from app.engine.verdict import classify as verdicts
from app.engine.verdict.reproduce import read_process

Json = dict[str, Any]
OUTPUT_KEEP = 4000  # characters of a run's output kept


def spec_for(settings: Any, python: str) -> SandboxSpec:
    return SandboxSpec(kind=settings.resolved_sandbox, python=python,
                       limits=Limits(memory_mb=settings.sandbox_memory_mb), gpu=bool(settings.gpu),
                       env={"PYTHONHASHSEED": "0"})


def run_on(settings: Any, python: str, source: str, *, label: str = "", timeout_s: float | None = None) -> Json:
    """One cold sandboxed run of `source` under `python`, as a run dict (`environment`: `label`)."""
    timeout = timeout_s or settings.repro_timeout
    spec = spec_for(settings, python)
    try:
        version = probe_interpreter(python).torch_version
    except InterpreterError:
        version = None
    run = read_process(run_sandboxed(source, spec, timeout_s=timeout), python=python, torch_version=version)
    return run.to_dict() | {"environment": label or python, "timeout_s": timeout,
                            "output_tail": run.output_tail[-OUTPUT_KEEP:]}


def judge(reported: Json | None, run: Json, expected_exception: str | None = None) -> str:
    """The issue verdict of one run against the reported failure."""
    return verdicts.classify(reported, run, expected_exception=expected_exception)


def probe_on(settings: Any, python: str, source: str, reported: Json | None, plan: bisect_probe.ProbePlan, *,
             label: str = "", expected_exception: str | None = None) -> bisect_probe.ProbeAnswer:
    """Does it reproduce under `python`? (reproduces / absent / unknown; see the module docstring)."""
    def once() -> tuple[str, Json]:
        run = run_on(settings, python, source, label=label)
        return judge(reported, run, expected_exception), run

    return bisect_probe.probe(once, plan)
