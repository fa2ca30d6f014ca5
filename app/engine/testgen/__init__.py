"""Tests Scrubbot writes: a failing repro marked as an expected failure, and stress tests.

- `repro_test`: a failure -> a unit test (`expectedFailure` / `xfail(strict=True)`) placed beside
  the failing test, and the same test with the marker removed (for fix verification).
- `stress` + `stress_template`: a stress test that makes a flaky failure show within 20 minutes,
  with the budget check (seed 004).
"""

from app.engine.testgen.repro_test import GeneratedTest
from app.engine.testgen.stress import stress_test

__all__ = ["GeneratedTest", "stress_test"]
