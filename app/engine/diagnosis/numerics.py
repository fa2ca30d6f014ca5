"""Experiments for wrong numbers and for running out of memory.

- `FIRST_NONFINITE`: a dispatch mode watching every aten op names the first one that turned
  finite inputs into NaN (or Inf), with the repro's line and the library function around it.
- `ANOMALY`: `torch.autograd.set_detect_anomaly(True)`: the backward node that returned NaN (or
  failed) and the forward line that made it (only for a repro that runs backward).
- `FLOAT64`: the float dtypes raised to float64: a precision limit or a logic error?
- `SMALLER`: sizes / 8, then / 64, for an out-of-memory that may not be the bug.
"""

from __future__ import annotations

import re

from app.engine.diagnosis import probes
from app.engine.diagnosis.model import (
    Experiment,
    Observation,
    Runs,
    Subject,
    Variant,
    tally,
    three_ways,
)
from app.engine.diagnosis.transforms import smaller_sizes, to_float64, with_prologue

OOM = re.compile(r"out of memory|OutOfMemoryError|MemoryError|can't allocate memory|Cannot allocate memory|"
                 r"not enough memory|std::bad_alloc", re.IGNORECASE)
FACTORS = (8, 64)


def _only(runs: Runs) -> tuple[Variant, list[Observation]]:
    return runs[0]


def first_nonfinite_variants(subject: Subject) -> list[Variant]:
    wants_inf = bool(re.search(r"\binf\b", subject.text, re.IGNORECASE)) and not \
        re.search(r"\bnan\b", subject.text, re.IGNORECASE)
    source, shift = with_prologue(subject.source, probes.first_nonfinite(inf=wants_inf))
    return [Variant("first non-finite value", source, line_shift=shift)]


def first_nonfinite_line(subject: Subject, runs: Runs) -> str:
    variant, observations = _only(runs)
    seen = [m for o in observations for m in probes.markers(o.output, "first-nonfinite")]
    if seen:
        found = seen[0]
        line = (found.get("line") or 0) - variant.line_shift
        where = f" in `{found['where']}`" if found.get("where") and found["where"] != "<module>" else ""
        library = f" (inside `{found['library']}`)" if found.get("library") else ""
        code = f": `{found['code']}`" if found.get("code") else ""
        at = f", at line {line}{where}{code}" if found.get("line") else ""
        return f"first {found.get('kind', 'NaN')} from `{found.get('op')}`{library}{at}"
    same, _ = tally(observations)
    if same:
        return "no operation turned finite inputs into NaN/Inf: the non-finite values come from the data itself"
    said = observations[0].description if observations else "no run"
    return f"no NaN/Inf appeared while watching every operation (the run {said})"


def anomaly_variants(subject: Subject) -> list[Variant]:
    if not re.search(r"\.backward\(|autograd\.grad\(|\bbackward\(", subject.source):
        return []
    source, shift = with_prologue(subject.source, probes.ANOMALY)
    return [Variant("torch.autograd.set_detect_anomaly(True)", source, line_shift=shift)]


def anomaly_line(subject: Subject, runs: Runs) -> str:
    variant, observations = _only(runs)
    for observation in observations:
        node, frame, what = probes.anomaly(observation.output)
        if node:
            returned = f"`{node}` returned {what} in backward" if what else f"the error is in the backward of `{node}`"
            forward = f"; its forward op is at {frame.describe(variant.line_shift)}" if frame else ""
            return f"detect_anomaly: {returned}{forward}"
    said = observations[0].description if observations else "no run"
    return f"detect_anomaly: no backward function returned NaN or failed (the run {said})"


def float64_variants(subject: Subject) -> list[Variant]:
    changed = to_float64(subject.source) or subject.source
    source, shift = with_prologue(changed, "import torch\ntorch.set_default_dtype(torch.float64)\n")
    return [Variant("float64", source, line_shift=shift)]


def float64_line(subject: Subject, runs: Runs) -> str:
    _, observations = _only(runs)
    return three_ways(observations,
                      "fails the same in float64: not a float32 precision problem (a logic or kernel error)",
                      lambda other: f"in float64 it fails otherwise: {other.description}",
                      "passes in float64: a float32 precision limit (overflow, underflow or cancellation), "
                      "not a logic error")


def smaller_variants(subject: Subject) -> list[Variant]:
    variants = []
    for factor in FACTORS:
        changed = smaller_sizes(subject.source, factor)
        if changed:
            variants.append(Variant(f"sizes / {factor}", changed))
    return variants


def _out_of_memory(observation: Observation) -> bool:
    return bool(OOM.search(observation.description) or (observation.outcome == "crash" and "SIGKILL"
                                                       in observation.description))


def _fits(observations: list[Observation]) -> bool:
    return any(not _out_of_memory(o) for o in observations)


def smaller_line(subject: Subject, runs: Runs) -> str:
    for variant, observations in runs:
        if not _fits(observations):
            continue
        return three_ways(observations,
                          f"with the {variant.label} it fails the same way: the out-of-memory is not the bug",
                          lambda other, label=variant.label: f"with the {label} it fails with {other.description}",
                          f"with the {variant.label} it passes: the failure needs the full size")
    last = runs[-1][0].label if runs else "smaller sizes"
    return f"still out of memory with the {last}"


FIRST_NONFINITE = Experiment("first_nonfinite", "nan", "which operation produced the first NaN/Inf",
                             first_nonfinite_variants, first_nonfinite_line, budget_s=90.0)
ANOMALY = Experiment("detect_anomaly", "nan", "which backward node returned NaN, from which forward line",
                     anomaly_variants, anomaly_line, budget_s=90.0)
FLOAT64 = Experiment("float64", "nan", "precision or logic", float64_variants, float64_line, budget_s=90.0)
SMALLER = Experiment("smaller_sizes", "oom", "does the failure need the memory", smaller_variants, smaller_line,
                     budget_s=120.0, stop=_fits)
