"""The whole GPU path on an NVIDIA host, stage by stage (not CI: it needs a GPU).

    python benchmarks/gpu/run_gpu_path.py [--python ENV/bin/python] [--out DIR]

1. the host's GPU facts (driver /proc files, nvidia-smi) as a report states them;
2. a sandbox launch with the device binds, /sys and no RLIMIT_AS: `torch.cuda.is_available()`,
   the device name and `torch.version.cuda` inside the sandbox;
3. `scrub repro` on three CUDA repros: a device-side assert (an out-of-range index), an OOM
   (a 1 TiB allocation), a CUDA-only wrong result (a check that fails only on cuda);
4. the device-side assert again with CUDA_LAUNCH_BLOCKING=1 (the error then names the launch);
5. a device-aware generated test (`expectedFailureCUDA` only where it fails) run under pytest.

Each stage prints PASS/FAIL with its evidence and its duration; nothing here is mocked. On a
host without the NVIDIA driver it says so and exits 2.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app.engine.sandbox.gpu import gpu_facts  # noqa: E402
from app.engine.sandbox.runner import Limits, Sandbox, SandboxSpec  # noqa: E402
from app.engine.sandbox.treerun import TreeRunner, pytest_argv  # noqa: E402
from app.engine.testgen.device_test import FuzzTestSpec, fuzz_test  # noqa: E402

PROBE = "import torch\nprint('cuda', torch.cuda.is_available(), torch.version.cuda, torch.cuda.get_device_name(0))\n"
REPROS = {
    "device_side_assert": "import torch\nx = torch.zeros(4, device='cuda')\nidx = torch.tensor([7], device='cuda')\n"
                          "print(x[idx].sum().item())\n",
    "oom": "import torch\nx = torch.empty(1 << 40, dtype=torch.uint8, device='cuda')\nprint(x.shape)\n",
    "cuda_only_wrong_result": "import torch\nfor device in ('cpu', 'cuda'):\n"
                              "    x = torch.arange(6., device=device)\n"
                              "    y = (x * 2).cpu()\n"
                              "    expected = torch.arange(6.) * 2 + (1 if device == 'cuda' else 0)\n"
                              "    assert torch.equal(y, expected), f'{device}: {y.tolist()}'\n",
}
TEST_PROGRAM = ("import torch\nDEVICE = 'cuda'\nx = torch.ones(3, device=DEVICE)\n"
                "assert (x.sum().item() == 3) == (x.device.type == 'cpu'), 'wrong on cuda'\n")


def stage(name: str, started: float, ok: bool, evidence: str) -> dict:
    seconds = time.monotonic() - started
    print(f"[{'PASS' if ok else 'FAIL'}] {name} ({seconds:.1f} s): {evidence[:600]}", flush=True)
    return {"stage": name, "ok": ok, "seconds": round(seconds, 1), "evidence": evidence[-2000:]}


def scrub_repro(python: str, path: Path, extra_env: dict[str, str] | None = None) -> dict:
    cmd = [sys.executable, "-m", "app.cli.main", "repro", str(path), "--python", python, "--json", "--runs", "1"]
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "SCRUB_GPU": "true", **(extra_env or {})}
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
    try:
        return json.loads(done.stdout)
    except ValueError:
        return {"error": (done.stdout + done.stderr)[-2000:]}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=sys.executable, help="an interpreter with a CUDA build of torch")
    parser.add_argument("--out", default="", help="write the stage results as JSON here")
    args = parser.parse_args()
    results = []
    started = time.monotonic()
    facts = gpu_facts()
    if facts is None:
        print("no NVIDIA driver on this host (/proc/driver/nvidia/version missing): nothing to run")
        return 2
    results.append(stage("gpu facts", started, facts.count > 0, facts.describe()))
    spec = SandboxSpec(python=args.python, gpu=True, limits=Limits(memory_mb=8192, tmpfs_mb=2048))
    started = time.monotonic()
    probe = Sandbox(spec).run(PROBE, timeout_s=300)
    text = probe.output.text()
    results.append(stage("sandbox launch (device binds, /sys, no RLIMIT_AS)", started,
                         probe.exit_code == 0 and "cuda True" in text, text))
    with tempfile.TemporaryDirectory() as tmp:
        for name, source in REPROS.items():
            path = Path(tmp) / f"{name}.py"
            path.write_text(source)
            started = time.monotonic()
            report = scrub_repro(args.python, path)
            results.append(stage(f"scrub repro: {name}", started, "error" not in report and
                                 report.get("outcome", report.get("verdict")) not in (None, "passed"),
                                 json.dumps(report)[:1500]))
        started = time.monotonic()
        path = Path(tmp) / "device_side_assert.py"
        blocking = scrub_repro(args.python, path, {"CUDA_LAUNCH_BLOCKING": "1"})
        results.append(stage("CUDA_LAUNCH_BLOCKING=1 rerun", started, "error" not in blocking, json.dumps(blocking)[:1500]))
        root = Path(tmp) / "repo"
        (root / "test").mkdir(parents=True)
        spec_test = FuzzTestSpec("test_fuzz_seed_1", TEST_PROGRAM, "pytorch", ("cpu", "cuda"), ("cuda",),
                                 ("GPU path benchmark.",), "wrong on cuda")
        generated = fuzz_test(spec_test, "test/test_gpu_path.py", None, "GPU path benchmark")
        (root / "test/test_gpu_path.py").write_text(generated.marked)
        started = time.monotonic()
        run = TreeRunner(Sandbox(spec), root).run(pytest_argv("test/test_gpu_path.py", extra=["-rA"]), 600)
        out = run.output.text()
        results.append(stage("device-aware test (expectedFailureCUDA on cuda only)", started,
                             run.exit_code == 0 and "_cuda" in out and "_cpu" in out, out))
    if args.out:
        Path(args.out).write_text(json.dumps({"gpu": facts.to_dict(), "stages": results}, indent=1))
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
