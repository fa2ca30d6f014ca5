"""Runners the minimizer judges candidates with, both inside the sandbox.

`cold`: a fresh sandboxed interpreter per run (1-3 s with torch), used for the original and for
the final re-check. `warm`: `app.engine.forkserver.ForkServer`, a zygote with torch preloaded in
one sandbox that forks a child per candidate (tens of ms). One server per repro: candidates of
one minimization share a uid and a /tmp, which is fine because they are all the same person's code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.engine.forkserver import ForkServer
from app.engine.sandbox import Sandbox, SandboxSpec

Runner = Callable[[str, float], Any]
# What the zygote imports once. `torch.optim` pulls in Dynamo lazily (2-3 s per candidate if not
# preloaded); a repro using torch.compile also pays for Inductor's modules.
BASE_PRELOAD = ("torch", "torch._dynamo", "torch.optim")
COMPILE_PRELOAD = ("torch._inductor.compile_fx",)


def preload_for(source: str) -> tuple[str, ...]:
    """Modules worth importing in the zygote for this repro (imports only: fork-safe)."""
    return BASE_PRELOAD + (COMPILE_PRELOAD if "compile" in source else ())


def sandbox_runners(python: str, jobs: int, spec: SandboxSpec | None = None,
                    preload: tuple[str, ...] = BASE_PRELOAD) -> tuple[Runner, Runner, Callable[[], None]]:
    """(cold_run, warm_run, close) for untrusted candidates run as `python`."""
    spec = spec or SandboxSpec(python=python)
    sandbox = Sandbox(spec)
    server = ForkServer(spec, jobs=jobs, preload=preload)

    def cold(source: str, timeout_s: float) -> Any:
        return sandbox.run(source, timeout_s=timeout_s)

    def warm(source: str, timeout_s: float) -> Any:
        return server.run(source, timeout_s=timeout_s)

    return cold, warm, server.close
