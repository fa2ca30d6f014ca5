"""Minimizer: shrink a repro while it keeps failing the same way (seed `001_...txt`, step 6).

    result = minimize(source, evaluate, jobs=2, budget_s=60, progress=print)
    result.source, result.stats.candidates, result.final_lines

`evaluate(sources) -> [bool]` is the oracle (a batch, so the sandbox can run candidates in
parallel); `batch(predicate)` adapts a plain `str -> bool`. `SignatureOracle` is the real one:
a candidate is interesting only if it fails with the original run's signature.
"""

from app.engine.minimize.driver import MinimizeResult, Progress, minimize, shrink
from app.engine.minimize.problem import CouldNotMinimize, ReductionProblem, Stats, batch
from app.engine.minimize.size import code_lines, count_tokens, size_key, tidy

__all__ = [
    "CouldNotMinimize",
    "MinimizeResult",
    "Progress",
    "ReductionProblem",
    "Stats",
    "batch",
    "code_lines",
    "count_tokens",
    "minimize",
    "shrink",
    "size_key",
    "tidy",
]
