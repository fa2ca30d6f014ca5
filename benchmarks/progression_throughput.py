"""Progression throughput: re-checks finished per hour by one `scrub worker -c 2`.

    python benchmarks/progression_throughput.py                  # 12 issues: 8 still broken, 4 fixed
    python benchmarks/progression_throughput.py --live 20 --fixed 0

Each tracked issue is an `issue` run that found its repro reproducing on build `old`; the
newest build is `new` (two virtual environments over this interpreter's torch, so every repro
imports the real torch). A live bug reproduces on `new` at its first run; a fixed one passes
`new` 14 times (1 cold run, the rest forked from a zygote) and fails on `old` (the witness),
then is commented on, labelled and closed on the fake GitHub. The worker's own scheduler thread
(the embedded broker) starts the re-checks; the clock runs from the worker's start to the
last re-check's end. No nightly index: no culprit search (see culprit_bisect.py for its cost).
Prints runs per hour for the mix, and the load average around it (the machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.db import queries  # noqa: E402
from app.db.migrate import upgrade  # noqa: E402
from app.db.models import StageEvent  # noqa: E402
from app.db.session import Database  # noqa: E402
from app.domain import utcnow  # noqa: E402
from app.settings import Settings  # noqa: E402
from tests.fakes.fake_github import FakeGitHub  # noqa: E402

REPORTED = {"kind": "exception", "exception": "RuntimeError", "message": "the bug is here",
            "expect": "RuntimeError: the bug is here"}
LIVE = ("import torch\n\nx = torch.randn(64, 64)\ny = x @ x.T\nraise RuntimeError('the bug is here')\n")
FIXED = ("import sys\n\nimport torch\n\nx = torch.randn(64, 64)\ny = x @ x.T\n"
         "if sys.prefix.endswith('old'):\n    raise RuntimeError('the bug is here')\n")


def venv(root: Path, name: str) -> str:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(root / name)],
                   check=True)
    return str(root / name / "bin" / "python")


def seed(database: Database, fake: FakeGitHub, number: int, source: str) -> None:
    repo = f"bench/r{number % 3}"
    fake.add_issue(repo, number, title=f"bug {number}")
    reproduction = {"verdict": "reproduces", "runs": 5, "reproduced": 5, "interval": [0.5655, 1.0],
                    "result": {"environment": "old"}}
    with database.session() as session:
        run = queries.create_run(session, kind="issue", repo=repo, issue=number, status="succeeded", ended_at=utcnow(),
                                 verdict="reproduces", title=f"bug {number}",
                                 target=f"https://github.com/{repo}/issues/{number}")
        session.add(StageEvent(run_id=run.id, stage="select", status="done",
                               output={"repro": {"source": source, "trusted": True}, "reported": REPORTED}))
        session.add(StageEvent(run_id=run.id, stage="reproduce", status="done",
                               output={"reproduction": reproduction, "verdict": "reproduces"}))
        session.commit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", type=int, default=8, help="issues that still reproduce")
    parser.add_argument("--fixed", type=int, default=4, help="issues fixed on the new build")
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    total = args.live + args.fixed
    with tempfile.TemporaryDirectory(prefix="scrub-progression-bench-", dir="/var/tmp") as tmp, FakeGitHub() as fake:
        root = Path(tmp)
        envs = {name: venv(root, name) for name in ("old", "new")}
        settings = Settings(data_dir=root / "data")
        settings.ensure_data_dir()
        upgrade(settings.resolved_database_url)
        database = Database(settings.resolved_database_url)
        for number in range(1, total + 1):
            seed(database, fake, number, LIVE if number <= args.live else FIXED)
        env = {k: v for k, v in os.environ.items() if not k.startswith("SCRUB_")} | {
            "SCRUB_DATA_DIR": str(root / "data"), "SCRUB_GITHUB_API_URL": fake.url, "SCRUB_GITHUB_TOKEN": "t",
            "SCRUB_SANDBOX": "bwrap", "SCRUB_ENVIRONMENTS": f"old={envs['old']},new={envs['new']}",
            "SCRUB_PROGRESSION_TICK_S": "2", "SCRUB_PROGRESSION_RUNS_PER_DAY": str(total + 10),
            "SCRUB_LOG_LEVEL": "WARNING"}
        load_before = os.getloadavg()
        started = time.monotonic()
        log = (root / "worker.log").open("wb")
        worker = subprocess.Popen([sys.executable, "-m", "app.cli.main", "worker", "-c", str(args.concurrency)],
                                  cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        loads, finished, verdicts, elapsed = [], [], {}, 0.0
        try:
            while time.monotonic() - started < 3600:
                with database.session() as session:
                    runs = [r for r in queries.list_runs(session, limit=1000) if r.kind == "progression"]
                finished = [r for r in runs if r.status in ("succeeded", "failed", "skipped")]
                if len(finished) >= total:
                    break
                loads.append(os.getloadavg()[0])
                time.sleep(1)
            elapsed = time.monotonic() - started
            verdicts = {r.issue: r.verdict for r in finished}
        finally:
            os.killpg(worker.pid, signal.SIGKILL)  # measured already: no warm shutdown to wait for
            worker.wait(60)
            log.close()
        closed = sum(1 for n in range(args.live + 1, total + 1) if fake.issue(f"bench/r{n % 3}", n)["state"] == "closed")
        print(f"{len(finished)} re-checks ({args.live} still reproducing, {args.fixed} fixed) by one worker -c "
              f"{args.concurrency} in {elapsed:.0f} s (from the worker's start): "
              f"{3600 * len(finished) / elapsed:.0f} re-checks/hour")
        print(f"verdicts: {sorted(set(verdicts.values()))}; fixed issues closed on the fake GitHub: {closed}/{args.fixed}")
        print(f"{os.cpu_count()} cores; load average before {load_before[0]:.1f}, during mean "
              f"{sum(loads) / max(1, len(loads)):.1f} (max {max(loads or [0]):.1f})")
        database.dispose()


if __name__ == "__main__":
    main()
