"""Runners the minimizer judges candidates with, both inside the sandbox.

`cold`: a fresh sandboxed interpreter per run (1-3 s with torch), used for the original and for
the final re-check. `warm`: `app.engine.sandbox.forkserver.ForkServer`, a zygote with torch preloaded in
one sandbox that forks a child per candidate (tens of ms). One server per repro: candidates of
one minimization share a uid and a /tmp, which is fine because they are all the same person's code.

The zygote starts in the background as soon as the runners exist, so its imports overlap the
cold run of the original (both take seconds with torch).

Threads: cold runs use the spec as given (unpinned by default: the reporter's thread count).
Candidates run pinned to one thread (many run at once on few cores). One thread hides some
bugs (a fork after a parallel region hangs only with a thread pool), so when the first warm
run, the original's check, passes pinned, the candidates run unpinned instead, from then on.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from app.engine.sandbox.forkserver import ForkServer
from app.engine.sandbox.runner import Sandbox, SandboxSpec

log = logging.getLogger(__name__)
Runner = Callable[[str, float], Any]
# What the zygote imports once. `torch.optim` pulls in Dynamo lazily (2-3 s per candidate if not
# preloaded); a repro using torch.compile also pays for Inductor's modules.
BASE_PRELOAD = ("torch", "torch._dynamo", "torch.optim")
COMPILE_PRELOAD = ("torch._inductor.compile_fx",)
# Dynamo's first compile in a process builds its tracing rules, variable trackers and guard
# machinery: ~0.1 s for a tiny function, ~0.2 s for a small module, in every forked child. Done
# once in the zygote (single-threaded torch, a few elements per tensor, caches reset after), a
# child's compile of the same shapes costs ~0.05 s. Each line exercises a path repros take: a
# module, a function with a graph break, `aot_eager`.
COMPILE_WARMUP = """
import torch

class _Warm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(4, 2)
        self.lin = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.GELU())

    def forward(self, x):
        return torch.nn.functional.softmax(self.lin(self.emb(x)).view(-1), dim=-1)

def _breaks(x):
    if x.sum().item() > 0:
        x = x + 1
    return x.relu()

with torch.no_grad():
    torch.compile(_Warm(), backend="eager")(torch.zeros(1, dtype=torch.long))
torch.compile(_breaks, backend="eager")(torch.ones(2))
torch.compile(lambda x: x.sin() * 2, backend="aot_eager")(torch.ones(2))
torch._dynamo.reset()
"""


@dataclass(frozen=True)
class Zygote:
    """What the fork server's zygote imports, and the warm-up it runs, before forking."""

    preload: tuple[str, ...] = BASE_PRELOAD
    warmup: str | None = None


def zygote_for(source: str) -> Zygote:
    """The zygote worth starting for this repro: torch only if it imports torch, Dynamo warmed
    only if it compiles (imports and tiny single-threaded ops only: fork-safe)."""
    if not re.search(r"^\s*(?:import|from)\s+torch\b", source, re.MULTILINE):
        return Zygote(preload=())
    if "compile" in source:
        return Zygote(BASE_PRELOAD + COMPILE_PRELOAD, COMPILE_WARMUP)
    return Zygote(BASE_PRELOAD)


def sandbox_runners(python: str, jobs: int, spec: SandboxSpec | None = None,
                    zygote: Zygote = Zygote()) -> tuple[Runner, Runner, Callable[[], None]]:
    """(cold_run, warm_run, close) for untrusted candidates run as `python`."""
    spec = spec or SandboxSpec(python=python)
    sandbox = Sandbox(spec)
    servers = [ForkServer(replace(spec, threads=1) if spec.threads is None else spec, jobs=jobs,
                          preload=zygote.preload, warmup=zygote.warmup)]
    servers[0].start_in_background()
    decided = [spec.threads is not None]  # pinned by the caller: nothing to decide
    deciding = threading.Lock()

    def cold(source: str, timeout_s: float) -> Any:
        return sandbox.run(source, timeout_s=timeout_s)

    def warm(source: str, timeout_s: float) -> Any:
        if not decided[0]:
            with deciding:
                if not decided[0]:
                    result = servers[-1].run(source, timeout_s=timeout_s)
                    if result.exit_code == 0:  # passes pinned: re-check, and go on, unpinned
                        log.info("the repro passes on one thread: its candidates run unpinned")
                        servers[-1].close()
                        servers.append(ForkServer(spec, jobs=jobs, preload=zygote.preload, warmup=zygote.warmup))
                        result = servers[-1].run(source, timeout_s=timeout_s)
                    decided[0] = True
                    return result
        return servers[-1].run(source, timeout_s=timeout_s)

    def close() -> None:
        for server in servers:
            server.close()

    return cold, warm, close

