"""Culprit search cost: probes and wall time to go from two releases to the PR, per level.

    python benchmarks/culprit_bisect.py                       # 14 nightlies x 8 commits a day, real runs
    python benchmarks/culprit_bisect.py --days 30 --per-day 20 --scripted   # every change position, counted

The builds are FAKE: `tests/fakes/culprit_world.py` makes a PyTorch-like history (PRs landed by
the merge bot, one nightly a day), pure-Python "torch" wheels of it on a PEP 503 index on
loopback, and the fake GitHub serves its commits (`compare`, `commits/{sha}/pulls`,
`contents`). Real mode does everything the service does: installs each probed nightly
(pip, from the local index), lays each probed commit's Python over the older nightly, and runs
the repro in the bubblewrap sandbox. A real nightly is a ~200 MB CPU wheel (several GB for
CUDA), so a real install costs far more than these; the probe counts carry over, the seconds do
not. `--scripted` replaces installs and runs by a script (as the tests do) to count the probes
for every position of the change in the range, deterministic and flaky (`--rate`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.engine.envs.nightly_env import wheel_env  # noqa: E402
from app.engine.envs.variants import build_from_version_py  # noqa: E402
from app.engine.verdict.bisect_probe import ProbePlan  # noqa: E402
from app.engine.verdict.culprit import describe  # noqa: E402
from app.github.client import GitHubClient  # noqa: E402
from app.pipelines.kit import builds, probes  # noqa: E402
from app.pipelines.kit.culprit import Point, Search  # noqa: E402
from app.pipelines.kit.culprit_stages import find_culprit  # noqa: E402
from app.pipelines.memory import MemoryRunContext  # noqa: E402
from app.settings import Settings  # noqa: E402
from tests.fakes.culprit_world import NEW_RELEASE, OLD_RELEASE, REPO, REPORTED, REPRO, make_culprit_world  # noqa: E402
from tests.fakes.fake_github import FakeGitHub  # noqa: E402
from tests.fakes.torch_nightlies import WheelIndex  # noqa: E402

BUG = {"outcome": "error", "exception": "AssertionError", "message": "scale(1) is 3"}
CLEAN = {"outcome": "passed"}


def release_python(root: Path, version: str, envs: Path) -> str:
    wheel = root / "simple" / "torch" / f"torch-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        build = build_from_version_py(archive.read("torch/version.py").decode())
    return builds.python_of(wheel_env(wheel, build, envs))


def scripted(world, rate: float):
    """Install nothing; a build with the change fails with probability `rate` (seeded, per build)."""
    import random

    order = world.commits
    by_env = {world.nightly[day]: day for day in world.days}

    def broken(build: str) -> bool:
        sha = world.by_day[build][-1] if build in world.by_day else build
        return order.index(sha) >= order.index(world.culprit)

    generator = random.Random(7)

    def run_on(settings, python, source, *, label="", timeout_s=None):
        build = Path(python).parent.parent.name.removeprefix("commit-")
        hit = broken(build) and generator.random() < rate
        return dict(BUG if hit else CLEAN) | {"environment": label, "output_tail": ""}

    probes.run_on = run_on
    builds.nightly_env = lambda settings, nightly: Path("/envs") / nightly.date
    builds.git_version = lambda env: next(c for c, d in by_env.items() if d == env.name)
    builds.overlay_env = lambda base, files, root, key, note: Path(f"/envs/commit-{note['commit']}")


def one(tmp: Path, days: int, per_day: int, change_at: tuple[int, int], *, real: bool, rate: float) -> dict:
    world = make_culprit_world(tmp / "world", days=days, per_day=per_day, change_at=change_at)
    root = world.wheels(tmp / "index")
    with FakeGitHub() as fake, WheelIndex(root) as index:
        world.seed(fake)
        settings = Settings(data_dir=tmp / "data", sandbox="bwrap", torch_nightly_index_url=index.url, repro_timeout=60)
        ctx = MemoryRunContext(run_id=1, github=GitHubClient(token="t", base_url=fake.url), settings=settings)
        if real:
            older = Point(OLD_RELEASE, OLD_RELEASE, False, python=release_python(root, OLD_RELEASE, tmp / "rel"))
            newer = Point(NEW_RELEASE, NEW_RELEASE, True, python=release_python(root, NEW_RELEASE, tmp / "rel"))
        else:
            scripted(world, rate)
            older, newer = Point(OLD_RELEASE, OLD_RELEASE, False), Point(NEW_RELEASE, NEW_RELEASE, True)
        plan = ProbePlan.for_rate(rate)
        started = time.monotonic()
        culprit = find_culprit(ctx, Search(REPRO, REPORTED, plan), older, newer)
        wall = time.monotonic() - started
    levels = {level.level: level for level in culprit.levels}
    return {"found": culprit.commit is not None and culprit.commit.sha == world.culprit,
            "line": describe(culprit, REPO), "wall_s": wall,
            "nightly_probes": levels["nightly"].probes if "nightly" in levels else 0,
            "nightly_builds": len([r for r in levels["nightly"].result.releases if r.get("runs")]) if "nightly" in levels else 0,
            "nightly_s": levels["nightly"].wall_s if "nightly" in levels else 0.0,
            "commit_probes": levels["commit"].probes if "commit" in levels else 0,
            "commit_builds": len([r for r in levels["commit"].result.releases if r.get("runs")]) if "commit" in levels else 0,
            "commit_s": levels["commit"].wall_s if "commit" in levels else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=14, help="nightlies between the two releases")
    parser.add_argument("--per-day", type=int, default=8, help="commits (PRs) a day")
    parser.add_argument("--scripted", action="store_true", help="count probes for every change position")
    parser.add_argument("--rate", type=float, default=1.0, help="the bug's failure rate (1: deterministic)")
    parser.add_argument("--positions", type=int, default=0, help="scripted: positions to try (0: all)")
    args = parser.parse_args()
    cases = [(d, i) for d in range(1, args.days) for i in range(args.per_day)] if args.scripted else \
        [(args.days // 2, args.per_day // 2)]
    if args.positions:
        step = max(1, len(cases) // args.positions)
        cases = cases[::step][:args.positions]
    print(f"range: {args.days} nightlies x {args.per_day} commits a day, failure rate {args.rate} "
          f"({ProbePlan.for_rate(args.rate).clean_runs} clean runs make a build 'absent'); "
          f"{'scripted runs' if args.scripted else 'real installs and sandboxed runs'}; fake nightlies; "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}", flush=True)
    results = []
    for change_at in cases:
        with tempfile.TemporaryDirectory(prefix="scrub-culprit-bench-", dir="/var/tmp") as tmp:
            result = one(Path(tmp), args.days, args.per_day, change_at, real=not args.scripted, rate=args.rate)
        results.append(result)
        print(f"change at day {change_at[0]} commit {change_at[1]}: {result['line']}; nightly level "
              f"{result['nightly_builds']} builds / {result['nightly_probes']} runs / {result['nightly_s']:.1f} s, "
              f"commit level {result['commit_builds']} builds / {result['commit_probes']} runs / "
              f"{result['commit_s']:.1f} s; total {result['wall_s']:.1f} s", flush=True)
    for key in ("nightly_builds", "nightly_probes", "commit_builds", "commit_probes", "wall_s"):
        values = [r[key] for r in results]
        print(f"{key}: mean {statistics.mean(values):.1f}, max {max(values):.1f}")
    print(f"right PR named: {sum(r['found'] for r in results)} of {len(results)}")


if __name__ == "__main__":
    main()
