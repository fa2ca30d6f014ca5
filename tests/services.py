"""Real Redis and Postgres servers for the integration tests, started on free ports.

Locally a missing binary (or torch) skips the tests that need it; with `CI=true` it fails them,
so CI never passes by skipping.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Iterator

import pytest

STARTUP_DEADLINE_S = 30


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: the integration tests must run)")
    pytest.skip(reason)


def require_torch() -> None:
    """torch, which CI installs (.ci/run): missing, it fails the test under CI=true, skips it locally."""
    try:
        import torch  # noqa: F401
    except ImportError as error:
        unavailable(f"torch cannot be imported: {error}")


def wait_for_port(port: int, process: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + STARTUP_DEADLINE_S
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"process exited with {process.returncode} before listening on {port}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on port {port}")


@pytest.fixture(scope="session")
def redis_server() -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        unavailable("redis-server is not installed")
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process)
        yield f"redis://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(10)


def postgres_bindir() -> Path | None:
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    initdb = candidates[0] if candidates else shutil.which("initdb")
    return Path(initdb).parent if initdb else None


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A throwaway cluster (trust auth, socket in its temp dir); yields a URL without database."""
    bindir = postgres_bindir()
    if bindir is None:
        unavailable("PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    root = Path(tempfile.mkdtemp(prefix="scrub-pg-"))
    as_postgres: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        shutil.chown(root, "postgres", "postgres")
        as_postgres = ["runuser", "-u", "postgres", "--"]
    data, port = root / "data", free_port()
    subprocess.run(
        [*as_postgres, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    pg_ctl = [*as_postgres, str(bindir / "pg_ctl"), "-D", str(data)]
    subprocess.run([*pg_ctl, "-o", options, "-l", str(root / "log"), "-w", "start"], check=True, stdout=subprocess.DEVNULL)
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run([*pg_ctl, "-m", "immediate", "stop"], stdout=subprocess.DEVNULL)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """A fresh, empty database on the session's cluster."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    conninfo = postgres_server.replace("postgresql+psycopg://", "postgresql://") + "/postgres"
    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return f"{postgres_server}/{name}"


def kill_leftovers(data_dir: str) -> None:
    """SIGKILL every process still running with this data dir in its environment (a worker a
    `scrub serve` under test left behind)."""
    marker = f"SCRUB_DATA_DIR={data_dir}".encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if marker in (proc / "environ").read_bytes().split(b"\0"):
                os.kill(int(proc.name), signal.SIGKILL)
        except (OSError, ValueError):
            continue
