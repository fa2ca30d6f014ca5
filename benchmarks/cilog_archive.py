"""Benchmark: `scrub ci-log` on a big run log archive, against `unzip -p archive > /dev/null`.

Generates, in a temporary directory, a GitHub Actions log archive of about `--mb` megabytes
(the zip file's size): several jobs, each as a job file and as step files (as GitHub serves
it), every line timestamped, mostly passing pytest lines with varied content (so it compresses
like a real log, about 6x), and a few failures per job. Then times both commands in the same
run and reads each one's peak RSS from `wait4`.

    python benchmarks/cilog_archive.py --mb 300
    python benchmarks/cilog_archive.py --mb 30 --mb 300     # memory should not depend on size

Targets: wall time <= 3x unzip; peak RSS flat (about the same at 30 MB and 300 MB).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JOBS = 8
STEPS_PER_JOB = 4

FAILURE_BLOCK = [
    "=================================== FAILURES ===================================",
    "___________________________ TestOps.test_index_{n} ____________________________",
    ">       out = x[idx]",
    "E       RuntimeError: CUDA error: device-side assert triggered",
    "",
    "test/test_ops.py:{n}: RuntimeError",
    "=========================== short test summary info ============================",
    "FAILED test/test_ops.py::TestOps::test_index_{n} - RuntimeError: CUDA error: device-side assert triggered",
    "===================== 1 failed, 99999 passed in 1234.56s =====================",
    "##[error]Process completed with exit code 1.",
]


def _line_pool(rng: random.Random, size: int = 40_000) -> list[str]:
    words = ["conv", "linear", "embedding", "grad", "index", "cuda", "cpu", "float32", "bfloat16", "sparse", "jit"]
    pool = []
    for i in range(size):
        name = "_".join(rng.choices(words, k=3))
        param = f"{rng.getrandbits(32):08x}"
        pool.append(
            f"test/test_{rng.choice(words)}.py::Test{rng.choice(words).title()}::test_{name}_{param} "
            f"\x1b[32mPASSED\x1b[0m [{rng.randint(0, 100):3d}%] ({rng.random():.4f}s)"
        )
    return pool


def _job_steps(rng: random.Random, pool: list[str], job_bytes: int, job: int) -> list[bytes]:
    """The job's step logs: timestamped passing lines, then one failure at the end."""
    steps, per_step = [], job_bytes // STEPS_PER_JOB
    clock = 0
    for step in range(STEPS_PER_JOB):
        lines, size = [f"##[group]Run step {step}", "##[endgroup]"], 0
        while size < per_step:
            line = rng.choice(pool)
            lines.append(line)
            size += len(line) + 30
        if step == STEPS_PER_JOB - 1:
            lines += [line.format(n=job) for line in FAILURE_BLOCK]
        text = "".join(
            f"2024-05-01T12:{(clock + i) // 600000 % 60:02d}:{(clock + i) // 10000 % 60:02d}.{(clock + i) % 10_000_000:07d}Z {ln}\n"
            for i, ln in enumerate(lines)
        )
        clock += len(lines)
        steps.append(text.encode())
    return steps


def make_archive(path: Path, megabytes: int, seed: int = 1) -> int:
    """Write an archive of about `megabytes` MB; returns its uncompressed size in bytes."""
    rng = random.Random(seed)
    pool = _line_pool(rng)
    # Each job is stored twice (job file + step files) and compresses about 6x.
    job_bytes = megabytes * (1 << 20) * 6 // 2 // JOBS
    total = 0
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for job in range(JOBS):
            name = f"test (default, {job + 1}, {JOBS}, linux.2xlarge)"
            steps = _job_steps(rng, pool, job_bytes, job)
            with archive.open(f"{job}_{name}.txt", "w") as whole:
                for step in steps:
                    whole.write(step)
            for number, step in enumerate(steps, start=1):
                archive.writestr(f"{name}/{number}_Step {number}.txt", step)
            total += 2 * sum(len(step) for step in steps)
    return total


def measure(command: list[str], stdout: Path) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of one command, stdout to `stdout`.

    Peak RSS comes from `/usr/bin/time` (a tiny parent): `wait4` from this Python process
    would report at least this process's own size, which a forked child counts until exec.
    """
    report = Path(tempfile.mkstemp(suffix=".time")[1])
    timed = ["/usr/bin/time", "-f", "%M", "-o", str(report), *command]
    with stdout.open("wb") as out:
        started = time.perf_counter()
        code = subprocess.call(timed, stdout=out, stderr=subprocess.DEVNULL)
        elapsed = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"{' '.join(command[:4])} exited with {code}")
    peak_kb = int(report.read_text().split()[-1])
    report.unlink()
    return elapsed, peak_kb * 1024


def bench(megabytes: int, workdir: Path) -> dict:
    archive = workdir / f"run-{megabytes}mb.zip"
    uncompressed = make_archive(archive, megabytes)
    unzip = measure(["unzip", "-p", str(archive)], Path(os.devnull))
    scrub = measure([sys.executable, "-m", "app.cli.main", "ci-log", str(archive), "--json"], workdir / "scrub.json")
    failures = json.loads((workdir / "scrub.json").read_text())["failures"]
    assert len(failures) == JOBS, f"expected {JOBS} failures, got {len(failures)}"
    return {
        "archive_mb": round(archive.stat().st_size / 2**20, 1),
        "uncompressed_mb": round(uncompressed / 2**20, 1),
        "unzip_s": round(unzip[0], 2),
        "scrub_s": round(scrub[0], 2),
        "time_ratio": round(scrub[0] / unzip[0], 2),
        "unzip_rss_mb": round(unzip[1] / 2**20, 1),
        "scrub_rss_mb": round(scrub[1] / 2**20, 1),
        "failures": len(failures),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, action="append", help="archive size(s) in MB (default: 30 and 300)")
    parser.add_argument("--keep", action="store_true", help="keep the generated archives (prints the directory)")
    args = parser.parse_args()
    sizes = args.mb or [30, 300]
    os.chdir(ROOT)
    with tempfile.TemporaryDirectory(prefix="scrub-bench-") as tmp:
        results = [bench(size, Path(tmp)) for size in sizes]
        for result in results:
            print(json.dumps(result))
        if len(results) > 1:
            small, large = results[0], results[-1]
            print(
                f"size x{large['archive_mb'] / small['archive_mb']:.1f}: scrub RSS {small['scrub_rss_mb']} -> "
                f"{large['scrub_rss_mb']} MB; time vs unzip {small['time_ratio']}x -> {large['time_ratio']}x (target <= 3x)"
            )
        if args.keep:
            print(f"archives in {tmp}; press enter to delete")
            input()


if __name__ == "__main__":
    main()
