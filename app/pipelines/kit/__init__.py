"""What several run kinds share; it imports no kind (an import-linter contract).

- `phases`: the phase clock (seed 002's time limits), `Halt` / `halt` / `halted`, `PhasedState`.
- `checkout`: the cached mirror and the run's worktree (`ensure_checkout`, `drop_checkout`,
  `remote_for`); the worktree is a `Checkout`, the one door to its files.
- `sandbox`: the sandboxed runner over a checkout (`tree_runner`) and the per-run timeout.
- `xfail`: does a generated test xfail in the sandbox (`verify_xfail`, `XfailCheck`).
- `stress`: seed 004's measure -> budget -> tune -> verify core: `stress` (a phased job's test),
  `stress_script` (a script, e.g. an issue's repro), `Stressed`, `StressFinding`.
"""
