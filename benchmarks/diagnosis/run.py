"""Real repros through the diagnosis experiments, one (or more) per experiment family.

    python benchmarks/diagnosis/run.py                 # every case; writes RESULTS.md
    python benchmarks/diagnosis/run.py --case nan      # the cases whose name contains "nan"

Each case is a repro in `repros/` (untrusted code from public threads: it runs only in
Scrubbot's sandbox), where it came from, and how a run shows the bug (`same`: a regex over the
run's error and output, the way the issue pipeline's judge reads a reported failure). The
runner measures the repro first (one run, or `runs` runs for a flaky one, as the reproduce stage
would), then runs `app.engine.diagnosis.diagnose_repro` through the kit's sandboxed runner (warm
in a fork server; cold where a variant sets the environment) and writes every finding to
RESULTS.md with the time it took. `gpu_only`: experiments that need CUDA are reported as not run
on this CPU-only machine; `force_cpu_variant` additionally runs the "on CPU" variant (which
needs no GPU) to show what it would add.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app.engine.diagnosis import Subject, diagnose_repro
from app.engine.diagnosis.model import Variant
from app.engine.diagnosis.processes import ON_CPU
from app.engine.sandbox.runner import Limits, SandboxSpec
from app.engine.verdict.classify import describe
from app.pipelines.kit.experiments import ScriptRunner, run_dict

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Case:
    name: str
    family: str
    file: str
    source: str  # where the repro comes from
    same: str  # regex: the run shows the bug
    runs: int = 1  # baseline runs (a flaky repro needs several for its rate)
    hash_seed: str | None = "0"  # PYTHONHASHSEED of the runs (None: random, as a CI job runs)
    timeout_s: float = 120.0
    force_cpu_variant: bool = False
    note: str = ""


CASES = [
    Case("compile_cond_inductor", "compile", "compile_cond_inductor_150114.py",
         "https://github.com/pytorch/pytorch/issues/150114 (open): inductor gives inf where eager gives 37269600",
         r"(?:Tensor-likes|Scalars) are not close"),
    Case("nan_lppool2d", "nan", "nan_lppool2d_184037.py",
         "https://github.com/pytorch/pytorch/issues/184037: LPPool2d returns NaN for negative inputs",
         r"any NaN: True"),
    Case("dataloader_collate", "dataloader", "dataloader_collate_worker.py",
         "the 'Caught RuntimeError in DataLoader worker process 0' threads of variable-length items "
         "(e.g. https://github.com/Suanmd/TR-MISR/issues/3); written for this benchmark",
         r"in DataLoader worker process"),
    Case("dataloader_shm", "dataloader", "dataloader_shm_5040.py",
         "https://github.com/pytorch/pytorch/issues/5040: workers die when a batch exceeds the shared memory "
         "(the sandbox's file size limit plays docker's small /dev/shm)", r"in DataLoader worker process"),
    Case("cuda_embedding_assert", "cuda", "cuda_embedding_assert_29966.py",
         "https://github.com/pytorch/pytorch/issues/29966: device-side assert from an embedding index",
         r"device-side assert|CUDA", force_cpu_variant=True,
         note="no GPU here: the repro itself cannot run (Torch not compiled with CUDA), so the CUDA "
              "experiments are not run; the CPU variant is run on its own to show what it adds"),
    Case("oom_triu_large", "oom", "oom_triu_large_136611.py",
         "https://github.com/pytorch/pytorch/issues/136611: triu_ of a 100000 x 100000 matrix (40 GB), "
         "reported on CUDA; here the CPU form", r"\[-inf, -inf|\[\s*-inf,\s+-inf"),
    Case("flaky_hash_seeds", "nondeterminism", "flaky_hash_seeds_wandb_3072.py",
         "https://github.com/wandb/docs/pull/3072: seeds derived from hash(...), random per process; the "
         "check after it is written for this benchmark", r"not the output of the first run", runs=8,
         hash_seed=None),
    Case("hang_pool", "hang", "hang_pool_maxtasksperchild_135705.py",
         "https://github.com/pytorch/pytorch/issues/135705: Pool(maxtasksperchild=1) returning tensors hangs",
         r"timed out", timeout_s=40.0),
]


def judge_for(case: Case, timeout_s: float):
    pattern = re.compile(case.same)

    def judge(process, variant) -> bool:
        run = run_dict(process, timeout_s)
        return bool(pattern.search(describe(run) + "\n" + (run["output_tail"] or "")))

    return judge


def run_case(case: Case) -> list[str]:
    source = (HERE / "repros" / case.file).read_text()
    env = {"PYTHONHASHSEED": case.hash_seed} if case.hash_seed is not None else {}
    spec = SandboxSpec(limits=Limits(memory_mb=4096), env=env)
    judge = judge_for(case, case.timeout_s)
    lines = [f"## {case.name} ({case.family})", "", f"Source: {case.source}", ""]
    if case.note:
        lines += [f"Note: {case.note}", ""]
    started = time.monotonic()
    with ScriptRunner(spec, judge, jobs=2, source=source) as run:
        # The reproduce stage's measurement; cold runs (env) when the hash seed must vary per run.
        baseline = run(Variant("original", source, env={"PYTHONHASHSEED": "random"} if case.hash_seed is None else {},
                               runs=case.runs), case.timeout_s)
        failures = sum(o.same for o in baseline)
        failing = next((o for o in baseline if o.same), baseline[0])
        subject = Subject(source, failing.description, output=failing.output[-4000:], outcome=failing.outcome,
                          runs=len(baseline), failures=failures or 1, gpu=False, timeout_s=case.timeout_s,
                          hash_seed_fixed=case.hash_seed is not None)
        lines.append(f"Repro: {failures}/{len(baseline)} runs show the bug; the run: {failing.description}")
        report = diagnose_repro(subject, run, budget_s=600, parallel=2)
        extra = []
        if case.force_cpu_variant:
            cpu_subject = replace(subject, gpu=True)
            variants = ON_CPU.variants(cpu_subject)
            extra = [(v, run(v, case.timeout_s)) for v in variants]
    seconds = time.monotonic() - started
    lines += ["", f"Patterns: {', '.join(report.patterns) or 'none'}", ""]
    for finding in report.findings:
        took = f" ({finding.seconds:.0f} s)" if finding.seconds else ""
        lines.append(f"- **{finding.experiment}** [{finding.status}]{took}: {finding.line}")
    if extra:
        lines.append(f"- **on_cpu** [ran alone, for this benchmark]: {ON_CPU.conclude(cpu_subject, extra)}")
    lines += ["", f"Next step: {report.next_step}", "", f"Total: {seconds:.0f} s", ""]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", default=[], help="run the cases whose name contains this")
    parser.add_argument("--out", default=str(HERE / "RESULTS.md"))
    args = parser.parse_args()
    chosen = [c for c in CASES if not args.case or any(word in c.name for word in args.case)]
    import torch

    out = ["# Diagnosis experiments on real repros", "",
           f"torch {torch.__version__}, this machine (2 shared cores, no GPU), `python benchmarks/diagnosis/run.py`.",
           ""]
    for case in chosen:
        print(f"{case.name} ...", file=sys.stderr, flush=True)
        found = run_case(case)
        print("\n".join(found), file=sys.stderr, flush=True)
        out += found
    Path(args.out).write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
