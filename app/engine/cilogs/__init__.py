"""GitHub Actions logs -> failing tests with fingerprints and diagnoses (the CI ingest engine).

- `archive`: `read_log(path, repo=...) -> LogReport`, a run's log archive (zip) or a text log.
- `scan` (bytes -> clean lines, flat memory), `job` (a job's lines -> failures), `parsers`
  (pytest, unittest, GoogleTest formats), `dumps` (faulthandler crashes, timeout stacks).
- `model`: the plain data (`Failure`, `JobLog`, `LogReport`).
- `fingerprint`: the same failure in two workflow runs gets the same fingerprint.
- the error-pattern catalog of seed 003 (error text -> what to try) is `app.engine.diagnosis.catalog`.
"""

from app.engine.cilogs.archive import read_log
from app.engine.cilogs.model import Failure, JobLog, LogReport

__all__ = ["Failure", "JobLog", "LogReport", "read_log"]
