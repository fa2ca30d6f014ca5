"""Per-candidate wall time of a torch repro: cold `python file.py` vs the fork server.

    python benchmarks/forkserver_vs_cold.py [--runs 20] [--no-sandboxed-cold]

Measured in one process, interleaved (cold, sandboxed cold, fork), median of `--runs` each:
- cold: `python repro.py` in a temporary directory, no sandbox (what a reducer does by hand);
- sandboxed cold: `Sandbox.run` (bwrap + setpriv + prlimit, a fresh interpreter);
- fork: `ForkServer.run` from the caller's side (request, fork, run, reply), zygote already up.
The zygote's one-off start-up (sandbox + `import torch`) is printed separately. Needs root
and bubblewrap. Target: cold / fork >= 20.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.engine.sandbox.forkserver import ForkServer  # noqa: E402
from app.engine.sandbox.runner import Sandbox, SandboxSpec  # noqa: E402

REPROS = {
    "shape-mismatch": "import torch\nx = torch.ones(2, 3)\ny = torch.ones(4)\nprint(x + y)\n",
    "residual-shape": (
        "import torch\nimport torch.nn as nn\n\n"
        "class Block(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, 8, 3)\n        self.bn = nn.BatchNorm2d(8)\n\n"
        "    def forward(self, x):\n        return x + torch.relu(self.bn(self.conv(x)))\n\n"
        "torch.manual_seed(0)\nBlock()(torch.randn(4, 3, 32, 32))\n"
    ),
}


def time_call(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--repro", choices=sorted(REPROS), default="residual-shape")
    parser.add_argument("--no-sandboxed-cold", action="store_true")
    args = parser.parse_args()
    source = REPROS[args.repro]
    spec = SandboxSpec()
    sandbox = Sandbox(spec)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "repro.py")
        path.write_text(source)
        started = time.perf_counter()
        with ForkServer(spec) as server:
            startup = time.perf_counter() - started
            cold, sandboxed, fork = [], [], []
            for _ in range(args.runs):
                cold.append(time_call(lambda: subprocess.run([sys.executable, str(path)], cwd=tmp,
                                                             capture_output=True, check=False)))
                if not args.no_sandboxed_cold:
                    sandboxed.append(time_call(lambda: sandbox.run(source, timeout_s=120)))
                fork.append(time_call(lambda: server.run(source, timeout_s=120)))
            last = server.run(source, timeout_s=120)
    med_cold, med_fork = statistics.median(cold), statistics.median(fork)
    print(f"repro: {args.repro} ({len(source.splitlines())} lines), {args.runs} runs each, torch {server.torch_version}")
    print(f"zygote start-up (sandbox + import torch, once): {startup:.3f} s")
    print(f"cold  `python repro.py`     median {med_cold * 1000:8.1f} ms")
    if sandboxed:
        print(f"cold in sandbox (bwrap)     median {statistics.median(sandboxed) * 1000:8.1f} ms")
    print(f"fork server (bwrap zygote)  median {med_fork * 1000:8.1f} ms   mode={last.mode} exit={last.exit_code}")
    print(f"ratio cold / fork: {med_cold / med_fork:.1f}x", end="")
    if sandboxed:
        print(f"   (sandboxed cold / fork: {statistics.median(sandboxed) / med_fork:.1f}x)")
    else:
        print()


if __name__ == "__main__":
    main()
