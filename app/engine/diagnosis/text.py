"""A diagnosis as short markdown: the pattern, one line per experiment, the next step.

Every line may quote what the repro printed (an error message, a source line), so each is made
safe with `no_mentions` (no `@user` pings, no Scrubbot markers); the caller puts the block in a
comment, a report section or a pull request body.
"""

from __future__ import annotations

from app.engine.diagnosis.model import NOT_RUN, DiagnosisReport
from app.engine.report.render import no_mentions

TITLES = {
    "backends": "torch.compile backends", "dynamic_shapes": "dynamic shapes", "dynamo_reset": "torch._dynamo.reset()",
    "compare_with_eager": "compiled vs eager", "first_nonfinite": "first NaN/Inf", "detect_anomaly": "detect_anomaly",
    "float64": "float64", "smaller_sizes": "smaller sizes", "cuda_launch_blocking": "CUDA_LAUNCH_BLOCKING=1",
    "on_cpu": "on CPU", "num_workers_0": "num_workers=0", "deterministic_algorithms": "deterministic algorithms",
    "one_thread": "one thread", "fixed_seeds": "fixed seeds", "hash_seed": "PYTHONHASHSEED",
}


def lines(report: DiagnosisReport) -> list[str]:
    """`- **title**: fact` per experiment, ran first, then what did not run."""
    ordered = sorted(report.findings, key=lambda f: f.status == NOT_RUN)
    return [f"- **{TITLES.get(f.experiment, f.experiment)}**: {no_mentions(f.line)}" for f in ordered]


def markdown(report: DiagnosisReport | None, *, heading: str = "Diagnosis") -> str:
    """The block ("" when there is nothing to say)."""
    if report is None or not (report.patterns or report.findings):
        return ""
    head = f"**{heading}**" + (f" (pattern `{report.pattern}`)" if report.pattern else "")
    body = lines(report)
    if not body and report.hints:
        body = [f"- {no_mentions(report.hints[0])}"]
    step = f"\n\nNext step: {no_mentions(report.next_step)}" if report.next_step else ""
    return head + ":\n\n" + "\n".join(body) + step
