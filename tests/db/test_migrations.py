"""The migrations build exactly the tables the models describe, on SQLite and on Postgres."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect
from sqlmodel import SQLModel

import app.db.models  # noqa: F401
from app.db.migrate import upgrade
from app.db.session import make_engine


def schema_differences(url: str) -> list:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return compare_metadata(MigrationContext.configure(connection, opts={"compare_type": True}), SQLModel.metadata)
    finally:
        engine.dispose()


def columns(url: str) -> dict[str, set[str]]:
    engine = make_engine(url)
    try:
        inspector = inspect(engine)
        return {t: {c["name"] for c in inspector.get_columns(t)} for t in inspector.get_table_names() if t != "alembic_version"}
    finally:
        engine.dispose()


def expected_columns() -> dict[str, set[str]]:
    return {name: {c.name for c in table.columns} for name, table in SQLModel.metadata.tables.items()}


def test_sqlite_schema_matches_the_models(tmp_path):
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    upgrade(url)
    assert columns(url) == expected_columns()
    assert schema_differences(url) == []


def test_upgrade_twice_is_a_no_op(tmp_path):
    url = f"sqlite:///{tmp_path / 'again.db'}"
    upgrade(url)
    upgrade(url)
    assert columns(url) == expected_columns()


@pytest.mark.services
def test_postgres_schema_matches_the_models(postgres_url):
    upgrade(postgres_url)
    assert columns(postgres_url) == expected_columns()
    assert schema_differences(postgres_url) == []


def test_run_logs_kept_as_artifacts_move_into_rows(tmp_path):
    from sqlalchemy import text

    url = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(url, "0001")
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            connection.execute(text(
                "INSERT INTO run (id, kind, repo, target, trigger, status, queue, params, created_at, updated_at) "
                "VALUES (1, 'issue', 'o/r', '', 'label', 'succeeded', 'default', '{}', '2026-11-22', '2026-11-22')"))
            connection.execute(text(
                "INSERT INTO artifact (run_id, name, kind, content, created_at) "
                "VALUES (1, 'log', 'log', '10:00:01 stage fetch: started\n10:00:02 stage fetch: done\n', '2026-11-22')"))
        upgrade(url)
        with engine.connect() as connection:
            lines = [row[0] for row in connection.execute(text("SELECT line FROM run_log WHERE run_id = 1 ORDER BY id"))]
            left = connection.execute(text("SELECT count(*) FROM artifact WHERE name = 'log'")).scalar()
    finally:
        engine.dispose()
    assert lines == ["stage fetch: started", "stage fetch: done"] and left == 0
