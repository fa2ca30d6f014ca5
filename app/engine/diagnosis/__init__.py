"""Diagnosis: the error-pattern catalog of seed 003 and the experiments each pattern calls for.

- `catalog`: the one table. A row (`Pattern`) recognises an error (regex) or a repro (`when`),
  says what to try (`hint`) and carries the `experiments` that try it; `diagnose(text)` is the
  first row matching a text (the CI ingest's hint).
- `plan`: `diagnose_repro(subject, run, budget_s=...)`: the rows that apply to a reproduced
  failure, their experiments run through the caller's sandbox, one fact per experiment.
- `compiled` (torch.compile: the backend ladder, dynamic shapes, `torch._dynamo.reset()`,
  compiled against eager), `numerics` (first NaN/Inf op, detect_anomaly, float64, smaller
  sizes), `processes` (CUDA_LAUNCH_BLOCKING, CPU, num_workers=0, deterministic kernels, one
  thread, fixed seeds, PYTHONHASHSEED): the experiments.
- `transforms` (source-to-source, line-preserving) and `probes` (prologues and what they print).
- `model`: the plain data (`Subject`, `Variant`, `Observation`, `Experiment`, `Finding`,
  `DiagnosisReport`).
"""

from app.engine.diagnosis.model import (
    DiagnosisReport,
    Finding,
    Observation,
    Subject,
    Variant,
)
from app.engine.diagnosis.plan import diagnose_repro

__all__ = ["DiagnosisReport", "Finding", "Observation", "Subject", "Variant", "diagnose_repro"]
