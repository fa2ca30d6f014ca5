"""A Postgres cluster and a Redis server of the test's own, on fixed ports, that a test may
restart mid-run (the session's shared servers in tests/services.py must stay up)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.services import free_port, postgres_bindir, unavailable, wait_for_port


class OwnPostgres:
    def __init__(self, root: Path) -> None:
        bindir = postgres_bindir()
        if bindir is None:
            unavailable("PostgreSQL server binaries are not installed")
        self.root, self.port = root, free_port()
        root.mkdir(parents=True, exist_ok=True)
        self.as_postgres: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(root, "postgres", "postgres")
            self.as_postgres = ["runuser", "-u", "postgres", "--"]
        data = root / "data"
        subprocess.run([*self.as_postgres, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
                        "--no-sync"], check=True, stdout=subprocess.DEVNULL)
        options = f"-p {self.port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self.pg_ctl = [*self.as_postgres, str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log"), "-w"]
        self.ctl("start")
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def ctl(self, *args: str) -> None:
        subprocess.run([*self.pg_ctl, *args], check=True, stdout=subprocess.DEVNULL)

    def restart(self) -> None:
        self.ctl("-m", "fast", "restart")  # every connection is cut

    def stop(self) -> None:
        subprocess.run([*self.pg_ctl, "-m", "immediate", "stop"], stdout=subprocess.DEVNULL)


class OwnRedis:
    def __init__(self, root: Path) -> None:
        self.binary = shutil.which("redis-server")
        if self.binary is None:
            unavailable("redis-server is not installed")
        self.root, self.port = root, free_port()
        root.mkdir(parents=True, exist_ok=True)
        self.process: subprocess.Popen | None = None
        self.start()
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        # Append-only file on: a restart keeps the queues, as a production Redis would.
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.root), "--save", "",
             "--appendonly", "yes", "--appendfsync", "always"], stdout=subprocess.DEVNULL)
        wait_for_port(self.port, self.process)

    def restart(self) -> None:
        self.stop()
        self.start()

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(30)


@pytest.fixture
def own_postgres():
    root = Path(tempfile.mkdtemp(prefix="scrub-pg-restart-"))  # the postgres user can enter it
    server = OwnPostgres(root)
    yield server
    server.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def own_redis(tmp_path):
    server = OwnRedis(tmp_path / "redis")
    yield server
    server.stop()
