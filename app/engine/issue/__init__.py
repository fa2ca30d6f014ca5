"""Reading a bug report before anything runs (seed 001 steps 1-4).

- `markdown`: issue + comments -> code blocks, repro candidates, the chosen repro, the reported
  error.
- `loose`: scripts, tracebacks and errors pasted outside fenced blocks.
- `python_names`: which names a snippet reads without defining (one definition of "defined").
- `triage`: is the issue actionable (closed, feature request, no repro, needs a GPU ...)?
- `review`: the security checklist as an AST scan of the repro (findings wait for approval).
"""

from app.engine.issue.markdown import Repro, ReportedError, repro_candidates, reported_error, select_repro
from app.engine.issue.review import Finding, scan
from app.engine.issue.triage import Triage, triage

__all__ = ["Finding", "ReportedError", "Repro", "Triage", "repro_candidates", "reported_error", "scan", "select_repro", "triage"]
