"""Real brokers, real worker processes: Redis + Postgres (production), and `scrub serve`
on the embedded defaults (filesystem broker + SQLite), driven over HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from app.db import queries
from app.db.migrate import upgrade
from app.db.models import FINISHED
from app.db.session import Database
from app.settings import Settings
from tests.foundation import load_payload, webhook_headers
from tests.services import free_port, wait_for_port
from workers.celery_app import create_celery
from workers.enqueue import CeleryEnqueuer

pytestmark = pytest.mark.services
DEADLINE_S = 90  # a generous bound for a hung worker, not a performance assertion


def start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    with log.open("wb") as out:
        return subprocess.Popen([sys.executable, "-m", "app.cli.main", *args], env=env, stdout=out, stderr=subprocess.STDOUT)


def stop(process: subprocess.Popen, sig: int = signal.SIGTERM) -> int:
    process.send_signal(sig)
    try:
        return process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()


def wait_until_finished(read_status, log: Path) -> str:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        status = read_status()
        if status in FINISHED or status == "awaiting_approval":
            return status
        time.sleep(0.2)
    pytest.fail(f"run did not finish; last status {read_status()!r}; log:\n{log.read_text()[-4000:]}")


def create_selftest_run(database: Database) -> int:
    with database.session() as session:
        run = queries.create_run(session, kind="selftest", repo="o/r", trigger="test")
        session.commit()
        return run.id


def scrub_env(tmp_path: Path, **scrub: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRUB_")}
    env.update({f"SCRUB_{k.upper()}": v for k, v in scrub.items()}, SCRUB_DATA_DIR=str(tmp_path / "data"))
    return env


def test_redis_broker_postgres_and_a_celery_worker_process(tmp_path, redis_server, postgres_url):
    upgrade(postgres_url)
    database = Database(postgres_url)
    settings = Settings(data_dir=tmp_path / "data", database_url=postgres_url, broker_url=redis_server)
    log = tmp_path / "worker.log"
    worker = start(["worker", "-c", "2"], scrub_env(tmp_path, database_url=postgres_url, broker_url=redis_server), log)
    try:
        run_id = create_selftest_run(database)
        CeleryEnqueuer(create_celery(settings)).run_pipeline(run_id)

        def status() -> str:
            with database.session() as session:
                return queries.run_detail(session, run_id).run.status

        assert wait_until_finished(status, log) == "succeeded", log.read_text()[-4000:]
        with database.session() as session:
            detail = queries.run_detail(session, run_id)
        assert [(e.stage, e.status) for e in detail.stages] == [("greet", "done"), ("work", "done"), ("report", "done")]
        assert detail.stages[1].output["worked_on"] == "repro-cpu"  # handed off through Redis
        assert "selftest.md" in {a.name for a in detail.artifacts}
    finally:
        assert stop(worker) == 0, log.read_text()[-4000:]
        database.dispose()


def test_a_repro_worker_with_no_credential_and_no_database_runs_the_repro_stage(tmp_path, redis_server, postgres_url):
    """The trust split: the repro-cpu worker is given the broker and nothing else (no database
    URL, no GitHub credential, a data dir of its own); the default worker, with both, records
    what it sends back and finishes the run."""
    upgrade(postgres_url)
    database = Database(postgres_url)
    settings = Settings(data_dir=tmp_path / "data", database_url=postgres_url, broker_url=redis_server)
    trusted_log, repro_log = tmp_path / "trusted.log", tmp_path / "repro.log"
    trusted = start(["worker", "-Q", "default", "-c", "1"],
                    scrub_env(tmp_path, database_url=postgres_url, broker_url=redis_server, github_token="ghp_trusted"),
                    trusted_log)
    repro_env = scrub_env(tmp_path / "repro-host", broker_url=redis_server)
    assert not {k for k in repro_env if k in ("SCRUB_DATABASE_URL", "SCRUB_GITHUB_TOKEN", "SCRUB_GITHUB_PRIVATE_KEY")}
    repro = start(["worker", "-Q", "repro-cpu", "-c", "1"], repro_env, repro_log)
    try:
        run_id = create_selftest_run(database)
        CeleryEnqueuer(create_celery(settings)).run_pipeline(run_id)

        def status() -> str:
            with database.session() as session:
                return queries.run_detail(session, run_id).run.status

        logs = lambda: trusted_log.read_text()[-3000:] + "\n---\n" + repro_log.read_text()[-3000:]  # noqa: E731
        assert wait_until_finished(status, repro_log) == "succeeded", logs()
        with database.session() as session:
            detail = queries.run_detail(session, run_id)
        assert [(e.stage, e.status) for e in detail.stages] == [("greet", "done"), ("work", "done"), ("report", "done")]
        assert detail.stages[1].output["worked_on"] == "repro-cpu"  # ran on the only repro-cpu worker...
        assert "selftest.md" in {a.name for a in detail.artifacts}  # ...its artifact recorded by the trusted one
        # The repro host never opened a database of its own either (the default is SQLite there).
        assert not list((tmp_path / "repro-host").rglob("*.db")), logs()
    finally:
        assert stop(repro) == 0, logs()
        assert stop(trusted) == 0, logs()
        database.dispose()


def test_a_repro_worker_refuses_credentials(tmp_path):
    env = scrub_env(tmp_path, github_private_key="-----BEGIN RSA PRIVATE KEY-----", database_url="sqlite:///x.db")
    done = subprocess.run([sys.executable, "-m", "app.cli.main", "worker", "-Q", "repro-gpu"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "must hold no credential" in done.stderr and "SCRUB_DATABASE_URL, SCRUB_GITHUB_PRIVATE_KEY" in done.stderr
    assert "BEGIN RSA" not in done.stderr  # names, never values


def worker_processes_of(data_dir: Path) -> list[int]:
    """Pids of processes whose environment points at `data_dir` (the serve's own worker)."""
    marker = f"SCRUB_DATA_DIR={data_dir}".encode()
    pids = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker in environ.read_bytes().split(b"\0"):
                pids.append(int(environ.parent.name))
        except OSError:
            continue
    return pids


def signed_post(http: httpx.Client, event: str, payload: dict, secret: str) -> httpx.Response:
    body = json.dumps(payload).encode()
    return http.post("/webhooks/github", content=body, headers=webhook_headers(event, body, secret))


def test_scrub_serve_on_the_embedded_defaults(tmp_path, webhook_fixtures, fake_github):
    port, secret, data_dir = free_port(), "serve-secret", tmp_path / "data"
    repo = "Codertocat/Hello-World"  # the repository of the example payloads
    fake_github.add_issue(repo, 1, title="Spelling error in the README file", body="")
    fake_github.add_collaborator(repo, "Codertocat")
    log = tmp_path / "serve.log"
    env = scrub_env(tmp_path, webhook_secret=secret, github_token="test-token", github_api_url=fake_github.url,
                    local_token="operator-token")
    serve = start(["serve", "--port", str(port)], env, log)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_port(port, serve)
        # The operator's script: local mode's token (the selftest's `o/r` is unknown to GitHub:
        # private as far as anyone without the token can tell).
        http = httpx.Client(base_url=base, timeout=10, headers={"Authorization": "Bearer operator-token"})
        assert http.get("/healthz").json()["status"] == "ok"

        # A labeled issue, delivered over HTTP, is recorded, queued and picked up by the worker.
        payload = load_payload(webhook_fixtures, "issues/labeled.payload.json")
        payload["label"]["name"] = "scrub"
        response = signed_post(http, "issues", payload, secret)
        assert response.status_code == 202, response.text
        issue_run = response.json()["run_id"]
        status = wait_until_finished(lambda: http.get(f"/api/v1/runs/{issue_run}").json()["status"], log)
        assert status in FINISHED | {"awaiting_approval"}  # its outcome is the issue pipeline's business

        # A selftest run goes through the filesystem broker, hands off to repro-cpu and back.
        database = Database(Settings(data_dir=data_dir).resolved_database_url)
        run_id = create_selftest_run(database)
        CeleryEnqueuer(create_celery(Settings(data_dir=data_dir))).run_pipeline(run_id)
        read = lambda: http.get(f"/api/v1/runs/{run_id}").json()["status"]  # noqa: E731
        assert wait_until_finished(read, log) == "succeeded", log.read_text()[-4000:]
        detail = http.get(f"/api/v1/runs/{run_id}").json()
        assert [s["stage"] for s in detail["stages"]] == ["greet", "work", "report"]

        # The status page's retry button runs it again from the start.
        assert http.post(f"/api/v1/runs/{run_id}/retry").status_code == 202
        assert wait_until_finished(read, log) == "succeeded"
        assert f"/runs/{run_id}" in http.get("/").text
        database.dispose()

        # `/scrub <unknown>`: a stranger is ignored; a collaborator gets the help reply, once.
        comment = load_payload(webhook_fixtures, "issue_comment/created.payload.json")
        comment["comment"]["body"] = "/scrub frobnicate"
        stranger = json.loads(json.dumps(comment))
        stranger["comment"]["user"]["login"] = stranger["sender"]["login"] = "stranger"
        stranger["comment"]["id"] += 1  # another comment (the same id would be a replay: a duplicate)
        assert signed_post(http, "issue_comment", stranger, secret).status_code == 202
        assert signed_post(http, "issue_comment", comment, secret).status_code == 202
        def help_replies() -> list:
            return [w for w in fake_github.writes_to("POST", "/comments") if "Scrubbot commands" in w.json["body"]]

        deadline = time.monotonic() + DEADLINE_S
        while not help_replies() and time.monotonic() < deadline:
            time.sleep(0.2)
        [reply] = help_replies()
        assert reply.path.endswith(f"/repos/{repo}/issues/1/comments") and "/scrub approve" in reply.json["body"]
    finally:
        # SIGTERM is what `docker stop` and process managers send: the worker goes down too.
        assert stop(serve, signal.SIGTERM) == 0, log.read_text()[-4000:]
    assert worker_processes_of(data_dir) == []  # the worker went down with the server


def test_the_worker_of_scrub_serve_does_not_outlive_it(tmp_path):
    """Even a SIGKILLed `scrub serve` leaves no worker consuming the queues (PR_SET_PDEATHSIG)."""
    port, data_dir, log = free_port(), tmp_path / "data", tmp_path / "serve.log"
    serve = start(["serve", "--port", str(port)], scrub_env(tmp_path), log)
    try:
        wait_for_port(port, serve)
        deadline = time.monotonic() + DEADLINE_S
        while not worker_processes_of(data_dir) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert worker_processes_of(data_dir), log.read_text()[-4000:]
    finally:
        serve.kill()
        serve.wait()
    deadline = time.monotonic() + DEADLINE_S
    while worker_processes_of(data_dir) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert worker_processes_of(data_dir) == [], log.read_text()[-4000:]
