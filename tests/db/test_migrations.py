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
