"""The database handle: an engine and short-lived sessions, built from a URL on demand.

Nothing here runs at import time. A process asks `database_for(url)` once it knows its
settings; tests build a `Database` per temporary file.
"""

from __future__ import annotations

from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool
from sqlmodel import Session


def _tune_sqlite(dbapi_connection, _record) -> None:
    # WAL lets the API read while the worker writes; busy_timeout waits instead of failing.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def make_engine(url: str, *, pooled: bool = True) -> Engine:
    """`pooled=False`: a connection per use, for a thread in a process that forks (a pool's
    sockets must not be shared with the children)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True) if pooled else create_engine(url, poolclass=NullPool)
    if parsed.database and parsed.database != ":memory:" and not parsed.database.startswith("file:"):
        _private_sqlite(Path(parsed.database))
    options = {} if pooled else {"poolclass": NullPool}
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 10}, **options)
    event.listen(engine, "connect", _tune_sqlite)
    return engine


def _private_sqlite(path: Path) -> None:
    """The database file 0600 (in a 0700 directory when this makes it) before SQLite opens it:
    SQLite gives its -wal and -shm files the database file's mode."""
    from app.private_files import private_dir, private_file

    if not path.parent.is_dir():
        private_dir(path.parent)
    private_file(path)
    for side in ("-wal", "-shm", "-journal"):
        if Path(f"{path}{side}").exists():
            private_file(Path(f"{path}{side}"))


class Database:
    """An engine plus a session factory. `with db.session() as s:` commits nothing by itself."""

    def __init__(self, url: str, *, pooled: bool = True) -> None:
        self.url = url
        self.engine = make_engine(url, pooled=pooled)

    @contextmanager
    def session(self) -> Iterator[Session]:
        with Session(self.engine, expire_on_commit=False) as session:
            yield session

    def dispose(self) -> None:
        self.engine.dispose()


@lru_cache(maxsize=8)
def database_for(url: str) -> Database:
    """One `Database` per URL per process (the API and each worker process share theirs)."""
    return Database(url)
