"""Experiments about where and how the repro runs: CUDA, DataLoader workers, nondeterminism.

- `LAUNCH_BLOCKING` / `ON_CPU` (GPU workers only): `CUDA_LAUNCH_BLOCKING=1` makes an
  asynchronous CUDA error surface at the line that launched the kernel; the same script on CPU
  usually turns a device-side assert into a readable IndexError.
- `SINGLE_PROCESS`: `num_workers=0`: the worker's real traceback, or no failure without workers.
- `DETERMINISTIC`, `ONE_THREAD`, `SEEDS`, `HASH_SEED`: for a flaky repro, each run as often as
  its measured rate needs for a clean streak to mean something: does the flakiness go away (or
  become a certainty) with deterministic kernels, one thread, fixed seeds, a fixed hash seed?
"""

from __future__ import annotations

import math

from app.engine.diagnosis import probes
from app.engine.diagnosis.model import (
    Experiment,
    Observation,
    Runs,
    Subject,
    Variant,
    first_other,
    tally,
    three_ways,
)
from app.engine.diagnosis.transforms import (
    dataloaders_single_process,
    to_cpu,
    with_prologue,
)

MIN_RUNS, MAX_RUNS = 3, 8
CONFIDENCE = 0.05  # a clean streak this likely by chance is no evidence


def runs_for(subject: Subject) -> int:
    """Runs of a variant: enough that, at the measured failure rate, no failure in all of them
    would happen by chance with at most 5% odds (3 to 8); 1 for a deterministic failure."""
    if not subject.flaky:
        return 1
    rate = min(max(subject.rate, 0.01), 0.99)
    return max(MIN_RUNS, min(MAX_RUNS, math.ceil(math.log(CONFIDENCE) / math.log(1 - rate))))


def _frame_text(observation: Observation, shift: int) -> str:
    frame = probes.last_frame(observation.output)
    return f" at {frame.describe(shift)}" if frame else ""


def launch_blocking_variants(subject: Subject) -> list[Variant]:
    source, shift = with_prologue(subject.source, probes.CUDA_BLOCKING)
    return [Variant("CUDA_LAUNCH_BLOCKING=1", source, line_shift=shift)]


def launch_blocking_line(subject: Subject, runs: Runs) -> str:
    (variant, observations), = runs
    failing = next((o for o in observations if o.outcome != "passed"), None)
    if failing is None:
        return "passes with CUDA_LAUNCH_BLOCKING=1: the failure needs kernels to overlap (a race or a sync bug)"
    return f"with CUDA_LAUNCH_BLOCKING=1 it fails with {failing.description}{_frame_text(failing, variant.line_shift)}"


def on_cpu_variants(subject: Subject) -> list[Variant]:
    changed = to_cpu(subject.source)
    return [Variant("on CPU", changed)] if changed else []


def on_cpu_line(subject: Subject, runs: Runs) -> str:
    (variant, observations), = runs
    return three_ways(observations, "fails the same way on CPU: not specific to CUDA",
                      lambda other: f"on CPU it fails with a readable error: {other.description}"
                                    f"{_frame_text(other, variant.line_shift)}",
                      "passes on CPU: the bug is in the CUDA path")


def single_process_variants(subject: Subject) -> list[Variant]:
    changed = dataloaders_single_process(subject.source)
    return [Variant("num_workers=0", changed)] if changed else []


def single_process_line(subject: Subject, runs: Runs) -> str:
    (variant, observations), = runs
    return three_ways(observations, "fails the same way with num_workers=0: the worker processes are not the cause",
                      lambda other: f"with num_workers=0 the real error shows: {other.description}"
                                    f"{_frame_text(other, variant.line_shift)}",
                      "passes with num_workers=0: the failure needs worker processes (pickling, fork safety, "
                      "shared memory)")


def _prologue_variant(label: str, prologue: str, subject: Subject) -> list[Variant]:
    source, shift = with_prologue(subject.source, prologue)
    return [Variant(label, source, runs=runs_for(subject), line_shift=shift)]


def _rate_line(label: str, subject: Subject, runs: Runs, *, none: str, every: str) -> str:
    (_, observations), = runs
    same, count = tally(observations)
    before = f"{subject.failures}/{subject.runs} without"
    if same == count:
        return f"{label}: every run fails ({same}/{count}; {before}): {every}"
    if same == 0 and all(o.outcome == "passed" for o in observations):
        return f"{label}: no run fails (0/{count}; {before}): {none}"
    other = first_other(observations)
    if same == 0 and other:
        return f"{label}: fails otherwise ({other.description})"
    return f"{label}: {same}/{count} runs fail ({before}): no clear change"


def deterministic_line(subject: Subject, runs: Runs) -> str:
    (_, observations), = runs
    op = next((found for o in observations if (found := probes.nondeterministic_op(o.output))), None)
    if op:
        return f"torch.use_deterministic_algorithms(True): `{op}` has no deterministic implementation (it raises)"
    return _rate_line("torch.use_deterministic_algorithms(True)", subject, runs,
                      none="a nondeterministic kernel is the cause", every="deterministic kernels make it certain")


def one_thread_line(subject: Subject, runs: Runs) -> str:
    label = "one thread (torch.set_num_threads(1))"
    if not subject.flaky:
        (_, observations), = runs
        same = "still hangs" if subject.outcome == "timeout" else "fails the same way"
        said = same if tally(observations)[0] else (
            f"fails with {first_other(observations).description}" if first_other(observations) else "passes")
        tail = {"passes": ": the thread pool is involved (a fork after a parallel region, or a race)",
                same: ": the thread pool is not the cause"}.get(said, "")
        return f"with {label} it {said}{tail}"
    return _rate_line(label, subject, runs, none="the flakiness comes from multithreading",
                      every="one thread makes it certain")


def seeds_line(subject: Subject, runs: Runs) -> str:
    return _rate_line("seeds fixed (random, torch, numpy: 0)", subject, runs,
                      none="seed 0 avoids it: the failure depends on the random data",
                      every="seed 0 reproduces it every time: the failure depends on the random data")


def hash_seed_variants(subject: Subject) -> list[Variant]:
    if subject.hash_seed_fixed:
        return []
    return [Variant("PYTHONHASHSEED=0", subject.source, env={"PYTHONHASHSEED": "0"}, runs=runs_for(subject))]


def hash_seed_line(subject: Subject, runs: Runs) -> str:
    return _rate_line("PYTHONHASHSEED=0", subject, runs,
                      none="the hash seed is the cause (set or dict order, or values derived from hash())",
                      every="a fixed hash seed makes it certain: the hash seed is involved")


def _flaky_only(build):
    return lambda subject: build(subject) if subject.flaky else []


LAUNCH_BLOCKING = Experiment("cuda_launch_blocking", "cuda", "which kernel launch fails", launch_blocking_variants,
                             launch_blocking_line, budget_s=90.0, needs_gpu=True)
ON_CPU = Experiment("on_cpu", "cuda", "a readable error on CPU", on_cpu_variants, on_cpu_line, budget_s=90.0,
                    needs_gpu=True)
SINGLE_PROCESS = Experiment("num_workers_0", "dataloader", "the worker's real error", single_process_variants,
                            single_process_line, budget_s=90.0)
DETERMINISTIC = Experiment(
    "deterministic_algorithms", "nondeterminism", "a nondeterministic kernel?",
    _flaky_only(lambda s: _prologue_variant("torch.use_deterministic_algorithms(True)", probes.DETERMINISTIC, s)),
    deterministic_line, budget_s=120.0)
ONE_THREAD = Experiment(
    "one_thread", "nondeterminism", "threads?",
    lambda s: _prologue_variant("one thread", probes.ONE_THREAD, s), one_thread_line, budget_s=120.0)
SEEDS = Experiment("fixed_seeds", "nondeterminism", "random data?",
                   _flaky_only(lambda s: _prologue_variant("seeds fixed", probes.SEEDS, s)), seeds_line,
                   budget_s=120.0)
HASH_SEED = Experiment("hash_seed", "nondeterminism", "hash order?", _flaky_only(hash_seed_variants), hash_seed_line,
                       budget_s=120.0)
