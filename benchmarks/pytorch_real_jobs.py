"""The CI job and the fuzz job on PyTorch's real files, stage by stage (not CI: minutes, real torch).

    python benchmarks/pytorch_real_jobs.py --pytorch-files DIR [--files 20000 --mb 300]
        [--seeds 9,...] [--template default] [--replay PROGRAMS] [--ci-test NODE --ci-exception X --ci-message M]
        [--minimize-budget-s S] [--json OUT]

`DIR` holds files of pytorch/pytorch at their repository paths, brought from the public
repository (they are not part of this project): at least TorchFuzz
(`tools/experimental/torchfuzz/fuzzer.py` and its package), and whatever else should be real
(test files, `tools/nightly.py`). The benchmark generates a tree of PyTorch's order of size and
file count (`pytorch_sized_checkout.make_tree`), lays the real files over it, commits it to a
local bare repository and runs, through the project's local fake GitHub:

1. the CI job (`ci_failure`) on `--ci-test` as if CI had reported it failing, on the build the
   job chooses for the commit (a tree without PyTorch's `torch/` package: the worker's torch);
2. the fuzz job (`fuzz`) for each `--seeds` with the real fuzzer (the repository's default
   command: `python tools/experimental/torchfuzz/fuzzer.py --seed N`), on this worker's devices.

`--replay PROGRAMS` (a folder of `<issue>.py` TorchFuzz programs, e.g.
`benchmarks/torchfuzz_real/programs`): the fuzz command is `benchmarks/torchfuzz_real/replay.py`,
copied into the tree, which runs the stored program of the seed (the issue number) with TorchFuzz's
own runner, so the job acts on a program PyTorch filed (see benchmarks/torchfuzz_real/README.md).

For each job it prints every stage with its status, duration and summary, then the report's
status and its facts (the build, the triage, the test). Phase limits are generous
(`--phase-s`): TorchFuzz's programs compile for tens of seconds each.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from pytorch_sized_checkout import git, make_tree  # noqa: E402

from app.github.client import GitHubClient  # noqa: E402
from app.pipelines.base import run_pipeline  # noqa: E402
from app.pipelines.ci_failure.stages import STAGES as CI_STAGES  # noqa: E402
from app.pipelines.fuzz.stages import STAGES as FUZZ_STAGES  # noqa: E402
from app.pipelines.memory import MemoryRunContext  # noqa: E402
from app.settings import Settings  # noqa: E402
from tests.fakes.fake_github import FakeGitHub  # noqa: E402

REPO = "pytorch/pytorch"
SCRUB_YML = "fuzz:\n  style: pytorch\n  lint: ruff\n"


REPLAY = Path(__file__).resolve().parent / "torchfuzz_real" / "replay.py"
REPLAY_COMMAND = "  command: python tools/experimental/torchfuzz/replay.py --seed {seed}\n"


def lay_replay(src: Path, programs: Path) -> int:
    """The replay fuzzer and the stored programs, next to TorchFuzz in the tree; how many programs."""
    torchfuzz = src / "tools/experimental/torchfuzz"
    shutil.copy2(REPLAY, torchfuzz / "replay.py")
    (torchfuzz / "replay_programs").mkdir(exist_ok=True)
    stored = sorted(programs.glob("*.py"))
    for path in stored:
        shutil.copy2(path, torchfuzz / "replay_programs" / path.name)
    return len(stored)


def build_tree(src: Path, bare: Path, real: Path, files: int, megabytes: int, template: str,
               replay: Path | None = None) -> dict:
    started = time.monotonic()
    src.mkdir(parents=True)
    make_tree(src, files, megabytes)
    copied = 0
    for path in sorted(real.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            target = src / path.relative_to(real)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
            copied += 1
    (src / ".github").mkdir(exist_ok=True)
    command = "" if template == "default" else \
        f"  command: python tools/experimental/torchfuzz/fuzzer.py --seed {{seed}} --template {template}\n"
    replayed = 0
    if replay is not None:
        replayed, command = lay_replay(src, replay), REPLAY_COMMAND
    (src / ".github" / "scrub.yml").write_text(SCRUB_YML + command)
    git("init", "-q", "--initial-branch=main", cwd=src)
    git("add", "-A", cwd=src)
    git("commit", "-q", "-m", "a pytorch-sized tree with pytorch/pytorch's real files", cwd=src)
    git("init", "-q", "--bare", str(bare), cwd=src.parent)
    git("config", "uploadpack.allowFilter", "true", cwd=bare)
    git("push", "-q", str(bare), "HEAD:main", cwd=src)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=src, capture_output=True, text=True,
                          check=True).stdout.strip()
    count = int(subprocess.run(["git", "ls-files"], cwd=src, capture_output=True, text=True,
                               check=True).stdout.count("\n"))
    size = sum(p.stat().st_size for p in src.rglob("*") if p.is_file() and ".git" not in p.parts)
    return {"head": head, "files": count, "real_files": copied, "replayed_programs": replayed,
            "mb": round(size / (1 << 20)),
            "seconds": round(time.monotonic() - started, 1)}


def run_job(stages, github: FakeGitHub, bare: Path, data: Path, params: dict, phase_s: float) -> dict:
    client = GitHubClient(token="ghp_bench", base_url=github.url, clone_urls={REPO: bare})
    settings = Settings(data_dir=data, phase_reproduce_s=phase_s, phase_fix_s=phase_s, phase_pr_s=phase_s)
    ctx = MemoryRunContext(run_id=1, github=client, params={"repo": REPO, **params}, settings=settings)
    started = time.monotonic()
    finished = run_pipeline(stages, ctx, any_queue=True)
    report = ctx.artifacts.get("report.md", ("", ""))[1]
    state = {k: v for out in ctx.completed_stages().values() for k, v in out.items()}
    return {
        "artifacts": {name: text[:20000] for name, (_, text) in ctx.artifacts.items()},
        "program": str(state.get("program", ""))[:20000],
        "generated": (state.get("generated") or {}).get("unmarked", "")[:20000],
        "verification": {k: {"ok": v.get("ok"), "problems": v.get("problems"), "output": v.get("output", "")[-3000:]}
                         for k, v in (state.get("verification") or {}).items()},
        "status": str(finished.status), "verdict": finished.verdict, "seconds": round(time.monotonic() - started, 1),
        "stages": [{"stage": s.stage, "status": s.status, "seconds": round(s.duration_s or 0, 1),
                    "summary": s.summary} for s in ctx.stage_summaries()],
        "facts": [line for line in report.splitlines() if line.startswith("- **")],
    }


def show(title: str, job: dict) -> None:
    print(f"\n## {title}: {job['status']} ({job['verdict']}), {job['seconds']} s", flush=True)
    for s in job["stages"]:
        print(f"  {s['stage']:<10} {s['status']:<8} {s['seconds']:>7.1f} s  {s['summary'][:160]}")
    for fact in job["facts"]:
        print(f"  {fact[:300]}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pytorch-files", required=True, type=Path)
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--mb", type=int, default=300)
    parser.add_argument("--seeds", default="9")
    parser.add_argument("--template", default="default")
    parser.add_argument("--replay", type=Path, default=None)
    parser.add_argument("--ci-test", default="")
    parser.add_argument("--ci-exception", default="AssertionError")
    parser.add_argument("--ci-message", default="")
    parser.add_argument("--phase-s", type=float, default=1800.0)
    parser.add_argument("--minimize-budget-s", type=float, default=0.0)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    if not (args.pytorch_files / "tools/experimental/torchfuzz/fuzzer.py").is_file():
        print(f"{args.pytorch_files} has no tools/experimental/torchfuzz/fuzzer.py: bring PyTorch's files "
              "(at their repository paths) from the public repository first", file=sys.stderr)
        return 2
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="scrub-real-", ignore_cleanup_errors=True) as tmp, FakeGitHub() as github:
        tmp_path = Path(tmp)
        bare = tmp_path / "pytorch.git"
        tree = build_tree(tmp_path / "src", bare, args.pytorch_files, args.files, args.mb, args.template,
                          args.replay)
        results["tree"] = tree
        print(f"tree: {tree['files']} files ({tree['real_files']} of them pytorch/pytorch's), {tree['mb']} MB, "
              f"made in {tree['seconds']} s", flush=True)
        github.add_repo(REPO)
        if args.ci_test:
            params = {"fingerprint": "b" * 64,
                      "failure": {"job": "linux-jammy-py3.11 / test", "test": args.ci_test, "kind": "exception",
                                  "exception": args.ci_exception, "message": args.ci_message,
                                  "signature": "b" * 64},
                      "workflow_run": {"id": 1, "head_sha": tree["head"], "head_branch": "main",
                                       "html_url": f"https://github.com/{REPO}/actions/runs/1"}}
            results["ci"] = run_job(CI_STAGES, github, bare, tmp_path / "data-ci", params, args.phase_s)
            show(f"CI job: {args.ci_test}", results["ci"])
        for seed in [s for s in args.seeds.split(",") if s.strip()]:
            params = {"fuzz-seed": seed.strip(), "head_sha": tree["head"], "trigger": "benchmark"}
            if args.minimize_budget_s:
                params["minimize_budget_s"] = args.minimize_budget_s
            results[f"fuzz seed {seed}"] = job = run_job(FUZZ_STAGES, github, bare, tmp_path / f"data-{seed}",
                                                         params, args.phase_s)
            show(f"fuzz job: seed {seed}", job)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
