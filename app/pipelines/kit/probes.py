"""A repro's runs on a build named by its interpreter, not by a `SCRUB_ENVIRONMENTS` label.

Nightlies and single-commit builds are environments made on demand (`app.pipelines.kit.builds`),
so their runs go through here: `run_on(settings, python, source)` is one cold sandboxed run read
as the issue kind reads its runs (outcome, exception, message, signature), and `probe_on` is the
bisection probe of `app.engine.verdict.bisect_probe`: it reproduces at the first reproducing
run, is absent after the plan's clean runs (sized to the measured failure rate), and could not
be tested after any other outcome. `recheck` answers the same question with the repeats forked
from a zygote (progression's re-checks, many clean runs of one script).
"""

from __future__ import annotations

import re
from typing import Any

from app.engine.sandbox.environments import InterpreterError, probe_interpreter
from app.engine.sandbox.forkserver import ForkServer
from app.engine.sandbox.runner import Limits, SandboxSpec, run_sandboxed
from app.engine.verdict import bisect_probe
from app.engine.verdict import classify as verdicts
from app.engine.verdict.reproduce import read_process

Json = dict[str, Any]
OUTPUT_KEEP = 4000  # characters of a run's output kept
WARM_JOBS = 2  # warm runs of one script at once on a CPU worker


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


def _imports_torch(source: str) -> bool:
    return bool(re.search(r"^\s*(?:import|from)\s+torch\b", source, re.M))


def recheck(settings: Any, python: str, source: str, reported: Json | None, plan: bisect_probe.ProbePlan, *,
            label: str = "", expected_exception: str | None = None) -> tuple[bisect_probe.ProbeAnswer, Json]:
    """`probe_on`'s answer, with the repeats warm: the first run cold (as a person runs it), the
    rest forked from a zygote that imported torch once, two at a time on a CPU worker (a script
    whose first warm run disagrees with its cold one runs cold from then on). Returns the answer
    and the run that settled it (the last one)."""
    first = run_on(settings, python, source, label=label)
    reading = bisect_probe.read_run(judge(reported, first, expected_exception), first)
    if reading != bisect_probe.ABSENT or plan.clean_runs <= 1:
        return _answer(reading, 1, first), first
    jobs = 1 if settings.gpu else WARM_JOBS
    server = ForkServer(spec_for(settings, python), jobs=jobs, preload=("torch",) if _imports_torch(source) else ())
    done, last, warm = 1, first, True
    try:
        while done < plan.clean_runs:
            want = min(jobs, plan.clean_runs - done)
            if warm:
                processes = server.run_many([source] * want, timeout_s=settings.repro_timeout)
                batch = [read_process(p, python=python, torch_version=server.torch_version).to_dict()
                         | {"environment": label or python, "mode": "fork"} for p in processes]
                readings = [bisect_probe.read_run(judge(reported, run, expected_exception), run) for run in batch]
                if done == 1 and any(r != bisect_probe.ABSENT for r in readings):
                    warm = False  # the first warm runs disagree with the cold one: trust only cold runs
                    server.close()
                    continue
            else:
                batch = [run_on(settings, python, source, label=label)]
                readings = [bisect_probe.read_run(judge(reported, batch[0], expected_exception), batch[0])]
            for run, reading in zip(batch, readings):
                done, last = done + 1, run
                if reading != bisect_probe.ABSENT:
                    return _answer(reading, done, run), run
    finally:
        server.close()
    return bisect_probe.ProbeAnswer(bisect_probe.ABSENT, done), last


def _answer(reading: str, runs: int, run: Json) -> bisect_probe.ProbeAnswer:
    why = "" if reading != bisect_probe.UNKNOWN else " ".join(verdicts.describe(dict(run)).split())[:200]
    return bisect_probe.ProbeAnswer(reading, runs, why)
