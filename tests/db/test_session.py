"""The SQLite database is private (0600, its -wal and -shm too) whoever opens it first: a
migration, the API or a worker."""

from __future__ import annotations

import os
import stat

from sqlalchemy import text

from app.db.migrate import upgrade
from app.db.session import Database


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_migration_makes_a_private_database_in_a_private_dir(tmp_path):
    db = tmp_path / "new-dir" / "scrub.db"
    upgrade(f"sqlite:///{db}")
    assert mode(db.parent) == 0o700 and mode(db) == 0o600
    for side in ("-wal", "-shm"):  # WAL mode: SQLite gives them the database file's mode
        if os.path.exists(f"{db}{side}"):
            assert mode(f"{db}{side}") == 0o600, side


def test_an_open_database_left_by_an_older_version_is_tightened(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    db = folder / "scrub.db"
    database = Database(f"sqlite:///{db}")
    with database.engine.begin() as connection:
        connection.execute(text("CREATE TABLE t (x INTEGER)"))
        connection.execute(text("INSERT INTO t VALUES (1)"))
    database.dispose()
    for path in folder.iterdir():
        os.chmod(path, 0o644)
    database = Database(f"sqlite:///{db}")
    with database.engine.connect() as connection:
        assert connection.execute(text("SELECT x FROM t")).scalar() == 1
    database.dispose()
    assert {path.name: mode(path) for path in folder.iterdir()} == {path.name: 0o600 for path in folder.iterdir()}
