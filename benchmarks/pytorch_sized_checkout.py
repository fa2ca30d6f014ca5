"""How long a pytorch/pytorch-sized checkout takes from the job's start to the first test start.

    python benchmarks/pytorch_sized_checkout.py --files 20000 --mb 300 [--json]

Generates a repository whose working tree has `--files` files and `--mb` MB (Python sources
of realistic sizes under `torch/`, `test/`, `aten/`, plus a few large data files, pushed to a
local bare remote), then times the stages a CI job runs before its first test: the blobless
mirror sync, the worktree, and the sandboxed `python` start over the bound checkout (the
moment a test would start). The zip era refused any checkout over 48 MB before the first
stage; the webhook's own part (verify, record, enqueue) is benchmarks/webhook_ingest.py's.
Give pytorch's real file count and size; the defaults are an order of magnitude, not a
measurement of pytorch.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.engine.git.repo import MirrorCache  # noqa: E402
from app.engine.sandbox.runner import Sandbox, SandboxSpec  # noqa: E402
from app.engine.sandbox.treerun import TreeRunner  # noqa: E402


def make_tree(src: Path, files: int, megabytes: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    tops = ["torch", "test", "aten/src/ATen/native", "torch/csrc", "third_party/fake", "tools", "benchmarks"]
    big = max(0, megabytes * (1 << 20) - files * 6000)  # what the sources leave goes to a few data files
    for index in range(files):
        top = tops[index % len(tops)]
        folder = src / top / f"d{index % 97}"
        folder.mkdir(parents=True, exist_ok=True)
        size = rng.randint(500, 11500)
        (folder / f"f{index}.py").write_text(("x = %d  # " % index) + "a" * size + "\n")
    for part in range(4):
        (src / "third_party" / f"blob{part}.bin").write_bytes(os.urandom(big // 4))


def git(*args: str, cwd: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--mb", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="scrub-bench-", ignore_cleanup_errors=True) as tmp:
        tmp_path = Path(tmp)
        src, bare = tmp_path / "src", tmp_path / "remote.git"
        started = time.monotonic()
        src.mkdir()
        make_tree(src, args.files, args.mb)
        git("init", "-q", "--initial-branch=main", cwd=src)
        git("add", "-A", cwd=src)
        git("commit", "-q", "-m", "tree", cwd=src)
        git("init", "-q", "--bare", str(bare), cwd=tmp_path)
        git("config", "uploadpack.allowFilter", "true", cwd=bare)
        git("push", "-q", str(bare), "HEAD:main", cwd=src)
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=src, capture_output=True, text=True).stdout.strip()
        generated = time.monotonic() - started
        stages = {}
        cache = MirrorCache(tmp_path / "mirrors")
        t = time.monotonic()
        cache.sync("o/big", bare, head)
        stages["mirror sync (blobless)"] = time.monotonic() - t
        t = time.monotonic()
        tree = cache.worktree("o/big", head, tmp_path / "wt", remote=bare)
        stages["worktree (fetches the blobs)"] = time.monotonic() - t
        t = time.monotonic()
        result = TreeRunner(Sandbox(SandboxSpec()), tree).run(["-c", "import os; print('first test starts', "
                                                                     "len(os.listdir('torch')))"], 120)
        stages["sandbox start over the bound checkout"] = time.monotonic() - t
        assert "first test starts" in result.output.text(), result.output.text()
        t = time.monotonic()
        TreeRunner(Sandbox(SandboxSpec()), tree).run(["-c", "print('again')"], 120)
        stages["second sandbox start (mirror and worktree cached)"] = time.monotonic() - t
        size = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file() and ".git" not in p.parts)
        report = {"files": args.files, "tree_mb": round(size / (1 << 20)), "generate_s": round(generated, 1),
                  "stages_s": {k: round(v, 2) for k, v in stages.items()},
                  "to_first_test_s": round(sum(list(stages.values())[:3]), 2)}
        print(json.dumps(report, indent=1) if args.json else "\n".join(f"{k}: {v}" for k, v in report.items()),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
