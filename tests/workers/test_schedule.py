"""The progression scheduler: a tick starts the re-checks due, once each, within the budget; and
the whole loop through a real `scrub worker` (embedded broker, its scheduler thread, the
sandbox) against the fake GitHub."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.db import queries
from app.db.migrate import upgrade
from app.db.models import Run, StageEvent
from app.db.session import Database
from app.domain import utcnow
from app.settings import Settings
from tests.conftest import ROOT
from tests.fakes.fake_github import fake_github  # noqa: F401  (fixture)
from tests.pipelines.envs import PREFIX_BUG, make_envs, remove
from tests.services import kill_leftovers
from workers.enqueue import RecordingEnqueuer
from workers.schedule import tick

REPORTED = {"kind": "exception", "exception": "RuntimeError", "message": "the bug is here",
            "expect": "RuntimeError: the bug is here"}
FIXED_IN_NEW = PREFIX_BUG.format(broken="old")
STILL_BROKEN = "raise RuntimeError('the bug is here')\n"
DEADLINE_S = 300  # a hung worker's bound on a loaded machine, not a performance assertion


def found(database: Database, repo: str, number: int, source: str, environment: str = "old") -> int:
    """An `issue` run that found the bug reproducing on `environment`, as the issue pipeline leaves it."""
    reproduction = {"verdict": "reproduces", "runs": 5, "reproduced": 5, "interval": [0.5655, 1.0],
                    "result": {"environment": environment}}
    with database.session() as session:
        run = queries.create_run(session, kind="issue", repo=repo, issue=number, status="succeeded",
                                 verdict="reproduces", title=f"bug {number}", ended_at=utcnow(),
                                 target=f"https://github.com/{repo}/issues/{number}")
        for stage, output in (("select", {"repro": {"source": source, "trusted": True, "url": run.target},
                                          "reported": REPORTED}),
                              ("reproduce", {"reproduction": reproduction, "verdict": "reproduces"})):
            session.add(StageEvent(run_id=run.id, stage=stage, status="done", output=output))
        session.commit()
        return run.id


@pytest.fixture
def db(tmp_path):
    settings = Settings(data_dir=tmp_path / "data")
    settings.ensure_data_dir()
    upgrade(settings.resolved_database_url)
    database = Database(settings.resolved_database_url)
    yield settings, database
    database.dispose()


def progression_runs(database: Database) -> list[Run]:
    with database.session() as session:
        return [r for r in queries.list_runs(session, limit=500) if r.kind == "progression"]


def test_a_tick_starts_each_due_re_check_once_and_keeps_to_the_budget(db):
    settings, database = db
    settings = settings.model_copy(update={"environments": f"old={sys.executable},new={sys.executable}",
                                           "progression_runs_per_day": 2})
    for number in (1, 2, 3):
        found(database, "o/r", number, STILL_BROKEN)
    enqueuer = RecordingEnqueuer()
    first = tick(settings, database, enqueuer)
    assert len(first) == 2 and enqueuer.runs == [(first[0], "default"), (first[1], "default")]
    assert tick(settings, database, enqueuer) == []  # the budget of the day is spent
    runs = progression_runs(database)
    assert {r.issue for r in runs} == {1, 2}
    params = next(r for r in runs if r.issue == 1).params
    assert params["source"] == STILL_BROKEN and params["reported"] == REPORTED
    assert params["build"]["label"] == "new" and params["last_build"]["label"] == "old"
    assert params["reason"] == "new build new" and params["last_state"] == "reproduces"


def test_a_bug_with_a_re_check_in_flight_is_not_started_twice(db):
    settings, database = db
    settings = settings.model_copy(update={"environments": f"old={sys.executable},new={sys.executable}"})
    found(database, "o/r", 1, STILL_BROKEN)
    assert len(tick(settings, database, RecordingEnqueuer())) == 1
    assert tick(settings, database, RecordingEnqueuer()) == []  # the first is still queued


def test_no_budget_no_ticks(db):
    settings, database = db
    found(database, "o/r", 1, STILL_BROKEN)
    assert tick(settings.model_copy(update={"progression_runs_per_day": 0}), database, RecordingEnqueuer()) == []


@pytest.fixture
def envs():
    made, root = make_envs(["old", "new"])
    yield made
    remove(root)


def test_through_the_worker_a_fix_is_closed_once_and_a_live_bug_gets_no_comment(tmp_path, fake_github, envs):  # noqa: F811
    data = tmp_path / "data"
    settings = Settings(data_dir=data)
    settings.ensure_data_dir()
    upgrade(settings.resolved_database_url)
    database = Database(settings.resolved_database_url)
    fake_github.add_issue("o/fixed", 1, title="fixed upstream")
    fake_github.add_issue("o/live", 2, title="still broken")
    found(database, "o/fixed", 1, FIXED_IN_NEW)
    found(database, "o/live", 2, STILL_BROKEN)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRUB_")} | {
        "SCRUB_DATA_DIR": str(data), "SCRUB_GITHUB_API_URL": fake_github.url, "SCRUB_GITHUB_TOKEN": "t",
        "SCRUB_SANDBOX": "bwrap", "SCRUB_REPRO_TIMEOUT": "30",
        "SCRUB_ENVIRONMENTS": f"old={envs['old']},new={envs['new']}",
        "SCRUB_PROGRESSION_TICK_S": "1", "SCRUB_PROGRESSION_INTERVAL_S": "1", "SCRUB_PROGRESSION_RUNS_PER_DAY": "2"}
    log = (tmp_path / "worker.log").open("wb")
    worker = subprocess.Popen([sys.executable, "-m", "app.cli.main", "worker", "-c", "2"], cwd=ROOT, env=env,
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def settled() -> bool:
        runs = progression_runs(database)
        live = [r for r in runs if r.repo == "o/live" and r.status == "succeeded"]
        return fake_github.issue("o/fixed", 1)["state"] == "closed" and len(live) == 2

    try:
        deadline = time.monotonic() + DEADLINE_S
        while not settled() and time.monotonic() < deadline and worker.poll() is None:
            time.sleep(0.5)
        time.sleep(3)  # a few more ticks: nothing more may start or be written
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
        kill_leftovers(str(data))
        log.close()
    output = (tmp_path / "worker.log").read_text()[-6000:]
    assert settled(), output
    runs = progression_runs(database)
    fixed = [r for r in runs if r.repo == "o/fixed"]
    assert [(r.status, r.verdict) for r in fixed] == [("succeeded", "fixed")], output  # closed: not re-checked
    (comment,) = fake_github.comments("o/fixed", 1)
    assert comment["body"].startswith("This issue no longer reproduces on PyTorch new: fixed in new.")
    assert fake_github.label_names("o/fixed", 1) == ["fixed"]
    assert fake_github.issue("o/fixed", 1)["state_reason"] == "completed"
    live = [r for r in runs if r.repo == "o/live"]
    assert [r.verdict for r in live] == ["reproduces", "reproduces"]  # the day's budget: two re-checks
    assert fake_github.comments("o/live", 2) == [] and fake_github.writes_to(path_contains="/o/live/") == []
    database.dispose()


def test_celery_beat_carries_the_tick_and_refuses_the_embedded_broker(tmp_path):
    from workers.celery_app import create_celery
    from workers.enqueue import PROGRESSION_TICK_TASK

    app = create_celery(Settings(data_dir=tmp_path, broker_url="redis://127.0.0.1:1", progression_tick_s=42))
    assert app.conf.beat_schedule["progression"] == {"task": PROGRESSION_TICK_TASK, "schedule": 42.0,
                                                     "options": {"queue": "default"}}
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRUB_")} | {"SCRUB_DATA_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "app.cli.main", "beat"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "scrub beat needs a real broker" in done.stderr


@pytest.mark.services
def test_scrub_beat_on_redis_ticks_through_a_worker(tmp_path, redis_server, postgres_url):
    upgrade(postgres_url)
    database = Database(postgres_url)
    found(database, "o/r", 1, STILL_BROKEN)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRUB_")} | {
        "SCRUB_DATA_DIR": str(tmp_path / "data"), "SCRUB_BROKER_URL": redis_server, "SCRUB_DATABASE_URL": postgres_url,
        "SCRUB_PROGRESSION_TICK_S": "1", "SCRUB_ENVIRONMENTS": f"old={sys.executable},new={sys.executable}",
        "SCRUB_GITHUB_API_URL": "http://127.0.0.1:9", "SCRUB_GITHUB_TOKEN": "t"}  # never the real GitHub
    logs = [(tmp_path / f"{name}.log").open("wb") for name in ("beat", "worker")]
    processes = [subprocess.Popen([sys.executable, "-m", "app.cli.main", *args], cwd=ROOT, env=env, stdout=log,
                                  stderr=subprocess.STDOUT, start_new_session=True)
                 for args, log in ((["beat"], logs[0]), (["worker", "-Q", "default", "-c", "1"], logs[1]))]
    try:
        deadline = time.monotonic() + DEADLINE_S
        while not progression_runs(database) and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(60)
        for log in logs:
            log.close()
    runs = progression_runs(database)
    assert [(r.repo, r.issue, r.trigger) for r in runs] == [("o/r", 1, "schedule: new build new")], \
        (tmp_path / "beat.log").read_text()[-3000:] + (tmp_path / "worker.log").read_text()[-3000:]
    database.dispose()
