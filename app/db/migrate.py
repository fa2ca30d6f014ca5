"""Alembic, driven from code: `scrub migrate` and `scrub serve` call `upgrade`."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"


def alembic_config(url: str) -> Config:
    if not (MIGRATIONS_DIR / "env.py").is_file():
        raise RuntimeError(f"migrations not found at {MIGRATIONS_DIR}; install the project from its source tree")
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    # `%` is ConfigParser's interpolation character; URLs may contain it (escaped passwords).
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)
