"""What a run means: signatures, outcomes, repeated runs, verdicts and bisection.

- `signature`: traceback -> exception class + distinctive message (`make_signature`, `match`).
- `normalize`: masking of addresses, paths and numbers shared by signatures and fingerprints.
- `reproduce`: run a repro, classify the process (`RunResult`), aggregate N runs.
- `flaky`: Wilson interval, the one sequential stop rule (`SequentialRule`), stress plans.
- `rerun`: what one rerun of a failing CI test says.
- `classify`: reported error + what the run did -> the issue verdict.
- `bisect`: k-ary search over ordered environments; untestable ones leave a range, not a boundary.
- `bisect_probe`: one environment's answer (reproduces / absent / unknown), with as many clean
  runs as the measured failure rate needs.
"""

from app.engine.verdict.flaky import RateEstimate, SequentialRule, wilson_interval
from app.engine.verdict.signature import Signature, make_signature

__all__ = ["RateEstimate", "SequentialRule", "Signature", "make_signature", "wilson_interval"]
