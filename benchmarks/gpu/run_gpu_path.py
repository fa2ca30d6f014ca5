"""The whole GPU path on an NVIDIA host, stage by stage (not CI: it needs a GPU).

    python benchmarks/gpu/run_gpu_path.py [--python ENV/bin/python] [--out DIR/results.json]

1. the host's GPU facts (driver /proc files, nvidia-smi) as a report states them;
2. a sandbox launch with the device binds, /sys and no RLIMIT_AS (the memory cgroup bounds it):
   `torch.cuda.is_available()`, the device name and `torch.version.cuda` inside the sandbox;
3. `scrub repro` (the CLI, as a person runs it) on three CUDA repros, each judged by its own
   error: a device-side assert (an out-of-range index), an OOM (a 1 TiB allocation), a
   CUDA-only wrong result (a check that fails only on cuda); `scrub repro --json` must carry the
   GPU facts;
4. the device-side assert again with `CUDA_LAUNCH_BLOCKING=1` (set by the script, as a reporter
   writes it: the sandbox passes no host variable): the error must move from the
   synchronizing line to the line that launched the kernel;
5. a device-aware generated test run under pytest in the sandbox: without the marker it fails on
   cuda only (with its message), with `expectedFailureCUDA` it passes on both.

Each stage prints PASS/FAIL with its evidence and its duration; nothing is mocked. On a host
without the NVIDIA driver it says so and exits 2; the judging functions are tested on CPU
(tests/benchmarks/gpu/test_run_gpu_path.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app.engine.fuzz.results import device_results, expected  # noqa: E402
from app.engine.sandbox.gpu import gpu_facts  # noqa: E402
from app.engine.sandbox.runner import Limits, Sandbox, SandboxSpec  # noqa: E402
from app.engine.sandbox.treerun import TreeRunner, pytest_argv  # noqa: E402
from app.engine.testgen.device_test import FuzzTestSpec, fuzz_test  # noqa: E402

NO_GPU = 2
PROBE = ("import torch\nprint('cuda', torch.cuda.is_available(), torch.version.cuda, "
         "torch.cuda.get_device_name(0) if torch.cuda.is_available() else '-')\n")
LAUNCH_LINE, SYNC_LINE = 4, 6  # the device-side assert repro: where the kernel launches, where it syncs
REPROS = {
    "device_side_assert": ("import torch\nx = torch.zeros(4, device='cuda')\nidx = torch.tensor([7], device='cuda')\n"
                           "y = x[idx]\nz = y * 2\nprint(z.sum().item())\n"),
    "oom": "import torch\nx = torch.empty(1 << 40, dtype=torch.uint8, device='cuda')\nprint(x.shape)\n",
    "cuda_only_wrong_result": ("import torch\nfor device in ('cpu', 'cuda'):\n"
                               "    x = torch.arange(6., device=device)\n"
                               "    y = (x * 2).cpu()\n"
                               "    expected = torch.arange(6.) * 2 + (1 if device == 'cuda' else 0)\n"
                               "    assert torch.equal(y, expected), f'{device}: {y.tolist()}'\n"),
}
# What each repro must fail with: (exception class, text its message or output must hold).
EXPECTED = {
    "device_side_assert": ("", "device-side assert"),
    "oom": ("OutOfMemoryError", "out of memory"),
    "cuda_only_wrong_result": ("AssertionError", "cuda:"),
}
TEST_PROGRAM = ("import torch\nDEVICE = 'cuda'\nx = torch.ones(3, device=DEVICE)\n"
                "assert (x.sum().item() == 3) == (x.device.type == 'cpu'), 'wrong on cuda'\n")


def blocking_variant(source: str) -> str:
    """The repro as a reporter reruns it: `CUDA_LAUNCH_BLOCKING=1` set before torch loads."""
    return 'import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n' + source


def failing_line(report: dict, offset: int = 0) -> int | None:
    """The repro's own line the traceback stops at (`File "/tmp/repro.py", line N`), less `offset`."""
    lines = re.findall(r'File "[^"]*repro\.py", line (\d+)', report.get("output_tail", ""))
    return int(lines[-1]) - offset if lines else None


def judge_probe(exit_code: int | None, text: str) -> bool:
    return exit_code == 0 and "cuda True" in text


def judge_repro(name: str, report: dict) -> tuple[bool, str]:
    """Did `scrub repro --json` reproduce `name` with its own error, and state the GPU facts?"""
    if "error" in report and "outcome" not in report:
        return False, f"scrub repro did not run: {report['error'][-400:]}"
    exception, text = EXPECTED[name]
    seen = " ".join(str(report.get(k, "")) for k in ("exception", "message", "signature", "output_tail"))
    problems = []
    if report.get("outcome") in (None, "passed"):
        problems.append(f"outcome {report.get('outcome')}")
    if exception and exception not in str(report.get("exception", "")):
        problems.append(f"exception {report.get('exception')!r}, not {exception}")
    if text.lower() not in seen.lower():
        problems.append(f"no {text!r} in the output")
    if not (report.get("gpu") or {}).get("models"):
        problems.append("no GPU facts in the report")
    return not problems, "; ".join(problems) or f"{report.get('signature')}"


def judge_blocking(plain: dict, blocking: dict) -> tuple[bool, str]:
    """With CUDA_LAUNCH_BLOCKING=1 the assert is raised where the kernel launched, not later."""
    ok, why = judge_repro("device_side_assert", blocking)
    where = failing_line(blocking, offset=2)  # the variant has two more lines on top
    before = failing_line(plain)
    detail = f"error at line {before} without, line {where} with CUDA_LAUNCH_BLOCKING=1 (launch: {LAUNCH_LINE})"
    return ok and where == LAUNCH_LINE, (detail if ok else f"{why}; {detail}")


def judge_device_test(unmarked: str, marked: str) -> tuple[bool, str]:
    """Without the marker the test fails on cuda only, with the bug's message; with
    `expectedFailureCUDA` both devices pass (PyTorch's marker swallows the expected failure)."""
    before = device_results(unmarked, ("cpu", "cuda"), "test_fuzz_seed_1")
    after = device_results(marked, ("cpu", "cuda"), "test_fuzz_seed_1")
    ok = (before == expected(("cpu", "cuda"), ("cuda",), marked=False, style="pytorch") and "wrong on cuda" in unmarked
          and after == expected(("cpu", "cuda"), ("cuda",), marked=True, style="pytorch"))
    return ok, f"without the marker {before}, with it {after}"


def stage(name: str, started: float, ok: bool, evidence: str) -> dict:
    seconds = time.monotonic() - started
    print(f"[{'PASS' if ok else 'FAIL'}] {name} ({seconds:.1f} s): {evidence[:600]}", flush=True)
    return {"stage": name, "ok": ok, "seconds": round(seconds, 1), "evidence": evidence[-2000:]}


def scrub_repro(python: str, path: Path) -> dict:
    cmd = [sys.executable, "-m", "app.cli.main", "repro", str(path), "--python", python, "--json", "--runs", "1"]
    # ROOT first, the caller's path after it (a bare GPU host may carry packages on PYTHONPATH)
    env = {**os.environ, "SCRUB_GPU": "true",
           "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=900, check=False)
    try:
        return json.loads(done.stdout)
    except ValueError:
        return {"error": (done.stdout + done.stderr)[-2000:]}


def sandbox_probe(spec: SandboxSpec) -> tuple[bool, str]:
    probe = Sandbox(spec).run(PROBE, timeout_s=300)
    text = probe.output.text()
    return judge_probe(probe.exit_code, text), text


def repro_stage(python: str, tmp: Path, name: str, reports: dict) -> tuple[bool, str]:
    path = tmp / f"{name}.py"
    path.write_text(REPROS[name])
    reports[name] = scrub_repro(python, path)
    ok, why = judge_repro(name, reports[name])
    return ok, why + " | " + json.dumps(reports[name])[:1200]


def blocking_stage(python: str, tmp: Path, reports: dict) -> tuple[bool, str]:
    path = tmp / "device_side_assert_blocking.py"
    path.write_text(blocking_variant(REPROS["device_side_assert"]))
    return judge_blocking(reports.get("device_side_assert", {}), scrub_repro(python, path))


def device_test_stage(spec: SandboxSpec, tmp: Path) -> tuple[bool, str]:
    root = tmp / "repo"
    (root / "test").mkdir(parents=True)
    spec_test = FuzzTestSpec("test_fuzz_seed_1", TEST_PROGRAM, "pytorch", ("cpu", "cuda"), ("cuda",),
                             ("GPU path benchmark.",), "wrong on cuda")
    generated = fuzz_test(spec_test, "test/test_gpu_path.py", None, "GPU path benchmark")
    outputs = []
    for text in (generated.unmarked, generated.marked):
        (root / "test/test_gpu_path.py").write_text(text)
        run = TreeRunner(Sandbox(spec), root).run(pytest_argv("test/test_gpu_path.py", extra=["-rA"]), 600)
        outputs.append(run.output.text())
    ok, why = judge_device_test(*outputs)
    return ok, why + " | " + " || ".join(o[-1500:] for o in outputs)


def attempt(name: str, work) -> dict:
    """One stage: its verdict and evidence, or the exception it raised (the next stages still run)."""
    started = time.monotonic()
    try:
        ok, evidence = work()
    except Exception as exc:  # noqa: BLE001 - a broken stage is a FAIL with its reason, not the end
        ok, evidence = False, f"{type(exc).__name__}: {exc}"
    return stage(name, started, ok, evidence)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=sys.executable, help="an interpreter with a CUDA build of torch")
    parser.add_argument("--out", default="", help="write the stage results as JSON here (after each stage)")
    args = parser.parse_args()
    started = time.monotonic()
    facts = gpu_facts()
    if facts is None:
        print("no NVIDIA driver on this host (neither /proc/driver/nvidia nor nvidia-smi): the GPU path needs an "
              "NVIDIA host with its driver loaded; nothing was run", file=sys.stderr)
        return NO_GPU
    results = [stage("gpu facts", started, facts.count > 0, facts.describe())]
    spec = SandboxSpec(python=args.python, gpu=True, limits=Limits(memory_mb=8192, tmpfs_mb=2048))
    reports: dict = {}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        stages = [("sandbox launch (device binds, /sys, no RLIMIT_AS)", lambda: sandbox_probe(spec)),
                  *((f"scrub repro: {repro}", lambda repro=repro: repro_stage(args.python, tmp, repro, reports))
                    for repro in REPROS),
                  ("CUDA_LAUNCH_BLOCKING=1 rerun", lambda: blocking_stage(args.python, tmp, reports)),
                  ("device-aware test (expectedFailureCUDA on cuda only)", lambda: device_test_stage(spec, tmp))]
        for title, work in stages:
            results.append(attempt(title, work))
            if args.out:
                Path(args.out).write_text(json.dumps({"gpu": facts.to_dict(), "stages": results}, indent=1))
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
