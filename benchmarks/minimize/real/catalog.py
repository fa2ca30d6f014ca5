"""Catalog: which real repros fail on this machine's torch (the material of the held-out set).

    nice -n 10 python benchmarks/minimize/real/catalog.py [--timeout 60] [--out catalog.json]

Runs every `benchmarks/real_issues/repros/*.py` and `benchmarks/torchfuzz_real/programs/*.py`,
one at a time, COLD in the sandbox exactly as the minimizer judges an original
(`session.original_signature`: a fresh sandboxed interpreter, the script wrapped by `probe`;
the cold runner of `runners.sandbox_runners` is `Sandbox(SandboxSpec(python)).run`, used here
directly so that no fork server starts per file), and records per file:

- `outcome`: `failing` (a failure signature: exception, signal, non-zero exit), `passes`
  (`NothingToKeep`), `timeout`, `cuda-only` (fails because there is no CUDA here),
  `missing-module` (fails on an import of a package not installed here: the bug is not reached);
- `exc_type`, `message` (first line of the exception, unmasked), `seconds`;
- `probe`: the file is a probe written here (its first line says `probe`), not an issue's script;
- `note`: why a file was classified by hand (`NOTES`).

`mps-only`: fails because there is no Apple GPU (the `'MPS' backend`). A signal's `message` is
faulthandler's `Fatal Python error` line, or `signal N`.

Only `failing` files that are not probes can be drawn (see README.md).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path[:0] = [str(ROOT), str(HERE.parent)]

from run import _first_line  # benchmarks/minimize/run.py

from app.engine.minimize.session import NothingToKeep, original_signature
from app.engine.sandbox.runner import Sandbox, SandboxSpec

SOURCES = (ROOT / "benchmarks/real_issues/repros", ROOT / "benchmarks/torchfuzz_real/programs")
# What a run says when it needs CUDA (a GPU, a CUDA build) that this machine does not have.
NO_CUDA = re.compile(r"Torch not compiled with CUDA enabled|Found no NVIDIA driver|No CUDA GPUs are available|"
                     r"torch\.cuda\.is_available\(\) is False|no CUDA|CUDA driver|cuda.*not available|"
                     r"device type.*cuda|nvcc|libcuda|triton", re.IGNORECASE)
NO_MPS = re.compile(r"'MPS' backend|MPS backend|mps.*not available", re.IGNORECASE)
# Classified by hand, with the reason (the only exceptions to the rules above).
NOTES = {
    "i136611.py": ("cuda-only", ("the issue's lines put the tensor on device='cuda'; as extracted the script has no "
                                 "`import torch` and fails on that NameError before reaching the CUDA call")),
}


def catalog_file(path: Path, sandbox: Sandbox, timeout_s: float) -> dict:
    source = path.read_text()
    runs: list = []

    def cold(text: str, timeout: float):
        runs.append(sandbox.run(text, timeout_s=timeout))
        return runs[-1]

    started = time.monotonic()
    entry: dict = {"file": str(path.relative_to(ROOT)), "probe": "probe" in source.splitlines()[0].lower()
                   if source else False}
    try:
        signature = original_signature(source, cold, timeout_s)
    except NothingToKeep:
        signature = None
    entry["seconds"] = round(time.monotonic() - started, 1)
    result = runs[-1]
    message = _first_line(result)
    if signature is None:
        entry.update(outcome="passes", exc_type="", message="")
        return entry
    entry.update(kind=signature.kind, exc_type=signature.exc_type, message=message[:300])
    if signature.kind == "timeout":
        entry["outcome"] = "timeout"
    elif NO_CUDA.search(f"{signature.exc_type}: {message}"):
        entry["outcome"] = "cuda-only"
    elif NO_MPS.search(f"{signature.exc_type}: {message}"):
        entry["outcome"] = "mps-only"
    elif signature.exc_type == "ModuleNotFoundError":
        entry["outcome"] = "missing-module"
    else:
        entry["outcome"] = "failing"
    if signature.kind in ("signal", "exit"):
        entry["code"] = signature.code
        text = (result.output.head + result.output.tail).decode("utf-8", "replace")
        fatal = re.search(r"^Fatal Python error: .*$", text, re.MULTILINE)
        entry["message"] = fatal.group(0) if fatal else f"{signature.kind} {signature.code}"
    if path.name in NOTES:
        entry["outcome"], entry["note"] = NOTES[path.name]
    return entry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--out", type=Path, default=HERE / "catalog.json")
    parser.add_argument("--files", default="", help="comma-separated paths (default: all of SOURCES)")
    args = parser.parse_args()
    files = ([Path(f).resolve() for f in args.files.split(",") if f] if args.files
             else sorted(p for d in SOURCES for p in d.glob("*.py")))
    sandbox = Sandbox(SandboxSpec(python=sys.executable))
    entries = []
    for path in files:
        entries.append(catalog_file(path, sandbox, args.timeout))
        e = entries[-1]
        print(f"{e['file']:55} {e['outcome']:14} {e['seconds']:>6} {e['exc_type']}: {e['message'][:80]}", flush=True)
    counts: dict[str, int] = {}
    for e in entries:
        counts[e["outcome"]] = counts.get(e["outcome"], 0) + 1
    print(counts)
    args.out.write_text(json.dumps({"torch": _torch_version(), "timeout_s": args.timeout, "counts": counts,
                                    "files": entries}, indent=1) + "\n")


def _torch_version() -> str:
    import importlib.metadata
    return importlib.metadata.version("torch")


if __name__ == "__main__":
    main()
