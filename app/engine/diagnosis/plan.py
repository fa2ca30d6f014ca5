"""From a reproduced failure to facts: which catalog patterns apply, and their experiments run.

`patterns(subject)`: the rows whose condition holds for this repro (it compiles, it is flaky, it
prints NaN), then the first row whose regex matches the failure (else its output). Their
experiments run in that order, each once (`experiments`).

`diagnose_repro(subject, run, budget_s=...)` runs them through `run(variant, timeout_s)`, the
caller's sandbox (it returns one `Observation` per `variant.runs`; the engine never starts a
process itself). With `parallel` > 1 the variants of an experiment that is not a ladder run
side by side (the runner must be thread-safe, as a fork server with that many jobs is); a
variant that runs several times (a flaky repro's rate) runs `parallel` at a time, and stops
when the experiment's budget is spent (its line then counts the runs that happened). Every experiment has its own time budget and the whole has `budget_s`: an
experiment that would start with less than `MIN_START_S` left is reported as not run, and so is
one that needs a GPU on a worker without one. The result is a `DiagnosisReport`: the patterns,
their hints, one `Finding` per experiment, and the next step they point to.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from app.engine.diagnosis.catalog import CATALOG, Pattern
from app.engine.diagnosis.model import (
    NOT_RUN,
    RAN,
    DiagnosisReport,
    Experiment,
    Finding,
    Observation,
    Runs,
    Subject,
    Variant,
    summary,
)

Runner = Callable[[Variant, float], list[Observation]]
MIN_START_S = 10.0  # an experiment does not start with less time than this left
MIN_VARIANT_S = 5.0
OWNERS = (  # what a ladder line blames -> where the issue goes
    ("in eager PyTorch", "not a compiler bug: treat it as a bug of the eager operator"),
    ("in Dynamo", "a Dynamo bug: route it to `module: dynamo` with the repro under backend='eager'"),
    ("in AOTAutograd", "an AOTAutograd bug: route it to `module: aotdispatch` with the repro under backend='aot_eager'"),
    ("decompositions or the partitioner", "a decomposition or partitioner bug: route it to `module: decompositions`"),
    ("in Inductor", "an Inductor bug: route it to `module: inductor`"),
)


def patterns(subject: Subject) -> list[Pattern]:
    found = [p for p in CATALOG if p.when is not None and p.when(subject)]
    for text in (subject.failure, subject.output):
        first = next((p for p in CATALOG if p.regex is not None and p.regex.search(text)), None)
        if first is not None:
            if first not in found:
                found.append(first)
            break
    return found


def experiments(matched: list[Pattern]) -> list[Experiment]:
    seen: dict[str, Experiment] = {}
    for pattern in matched:
        for experiment in pattern.experiments:
            seen.setdefault(experiment.name, experiment)
    return list(seen.values())


def diagnose_repro(subject: Subject, run: Runner, *, budget_s: float = 240.0, parallel: int = 1,
                   clock: Callable[[], float] = time.monotonic) -> DiagnosisReport:
    matched = patterns(subject)
    started = clock()
    findings: list[Finding] = []
    for experiment in experiments(matched):
        variants = experiment.variants(subject)
        if not variants:
            continue  # nothing in this repro to vary
        left = budget_s - (clock() - started)
        if experiment.needs_gpu and not subject.gpu:
            findings.append(Finding(experiment.name, experiment.family, NOT_RUN,
                                    f"not run ({experiment.question}): it needs a GPU, and this worker has none"))
        elif left < MIN_START_S:
            findings.append(Finding(experiment.name, experiment.family, NOT_RUN,
                                    f"not run ({experiment.question}): the {budget_s:.0f} s for experiments are spent"))
        else:
            findings.append(_run_one(experiment, variants, subject, run, min(experiment.budget_s, left), clock,
                                     parallel))
    report = DiagnosisReport(patterns=[p.name for p in matched], hints=[p.hint for p in matched],
                             findings=findings, seconds=round(clock() - started, 3))
    return DiagnosisReport(report.patterns, report.hints, findings, next_step(report), report.seconds)


def _run_one(experiment: Experiment, variants: list[Variant], subject: Subject, run: Runner, budget_s: float,
             clock: Callable[[], float], parallel: int = 1) -> Finding:
    started = clock()
    runs: Runs = []
    if experiment.stop is None and parallel > 1 and len(variants) > 1:
        timeout = min(subject.timeout_s, budget_s)  # side by side: each has the whole budget
        with ThreadPoolExecutor(max_workers=parallel) as pool:
            runs = list(zip(variants, pool.map(lambda v: run(v, timeout), variants)))
    for variant in variants if not runs else ():
        observations = _batches(variant, subject, run, budget_s, started, clock, parallel)
        if not observations:
            break
        runs.append((variant, observations))
        if experiment.stop is not None and experiment.stop(observations):
            break
    seconds = round(clock() - started, 3)
    if not runs:
        return Finding(experiment.name, experiment.family, NOT_RUN,
                       f"not run ({experiment.question}): its {budget_s:.0f} s budget is too short", seconds=seconds)
    line = experiment.conclude(subject, runs)
    ran = {variant.label for variant, _ in runs}
    skipped = [v.label for v in variants if v.label not in ran]
    if skipped and (experiment.stop is None or not experiment.stop(runs[-1][1])):
        line += f" (its {budget_s:.0f} s ran out before: {', '.join(skipped)})"
    return Finding(experiment.name, experiment.family, RAN, line,
                   [summary(variant, observations) for variant, observations in runs], seconds)


def _batches(variant: Variant, subject: Subject, run: Runner, budget_s: float, started: float,
             clock: Callable[[], float], parallel: int) -> list[Observation]:
    """The variant's runs, `parallel` at a time, while the experiment's budget lasts."""
    observations: list[Observation] = []
    while len(observations) < variant.runs:
        remaining = budget_s - (clock() - started)
        if remaining < MIN_VARIANT_S:
            break
        batch = min(max(1, parallel), variant.runs - len(observations))
        observations += run(replace(variant, runs=batch), min(subject.timeout_s, remaining))
    return observations


def next_step(report: DiagnosisReport) -> str:
    """What the facts point to: the owners of the layer that breaks, the real error, else the hint."""
    for finding in report.ran:
        if finding.experiment == "backends":
            for phrase, step in OWNERS:
                if phrase in finding.line:
                    return step[0].upper() + step[1:] + "."
        if finding.experiment == "num_workers_0" and "real error" in finding.line:
            return "Fix the error the DataLoader worker hid (shown with num_workers=0), not the DataLoader."
        if finding.experiment == "hash_seed" and "the hash seed is the cause" in finding.line:
            return ("Pin PYTHONHASHSEED (or stop depending on set order and hash()): with it fixed the repro "
                    "no longer varies from run to run.")
        if finding.experiment == "fixed_seeds" and "every time" in finding.line:
            return "Pin the seeds (seed 0 fails every time) to make the repro deterministic, then minimize it."
        if finding.experiment == "smaller_sizes" and "not the bug" in finding.line:
            return "Report the smaller repro: the bug does not need the memory."
        if finding.experiment == "first_nonfinite" and finding.line.startswith("first "):
            return f"Start at the operation that makes the first non-finite value from finite inputs ({finding.line})."
    if report.hints:
        return report.hints[0].split(". ")[0].rstrip(".") + "."
    return ""
