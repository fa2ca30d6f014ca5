"""Running untrusted Python: bubblewrap, limits, and a fork server for many similar runs.

- `policy`: what a sandbox is (`SandboxSpec`, `Limits`), the environment a repro sees and the
  bwrap command line.
- `runner`: `Sandbox.run(...) -> ProcessResult`, one process in the sandbox with a wall-clock
  limit, a process-tree kill and bounded output (`capture`).
- `uids`, `cgroups`: host uids leased per sandbox and whole-sandbox memory/pids limits.
- `forkserver` (host side), `forkserver_child` and `forkserver_candidate` (inside the sandbox):
  a zygote that imports torch once and forks one child per candidate.
- `treerun`: a command over a copy of a checkout (a CI test rerun).
- `environments`: the named interpreters repros and bisection run under.
"""

from app.engine.sandbox.policy import Limits, SandboxSpec
from app.engine.sandbox.runner import ProcessResult, Sandbox, SandboxError, UntrustedCodeRefused

__all__ = ["Limits", "ProcessResult", "Sandbox", "SandboxError", "SandboxSpec", "UntrustedCodeRefused"]
