"""run_log: a run's log as appended rows (it was an artifact rewritten per line).

Revision ID: 0002
Revises: deploy_access_001
Create Date: 2026-11-23
"""

from __future__ import annotations

import re

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "deploy_access_001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("line", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_run_log_run_id", "run_log", ["run_id"], unique=False)
    # Earlier runs kept their log as an artifact: move each into rows, one row per line.
    connection = op.get_bind()
    logs = connection.execute(sa.text("SELECT run_id, content, created_at FROM artifact WHERE name = 'log'")).fetchall()
    for run_id, content, created_at in logs:
        for line in (content or "").splitlines():  # "HH:MM:SS message": the time is `at` now
            connection.execute(sa.text("INSERT INTO run_log (run_id, at, line) VALUES (:r, :a, :l)"),
                               {"r": run_id, "a": created_at, "l": re.sub(r"^\d\d:\d\d:\d\d ", "", line)})
    connection.execute(sa.text("DELETE FROM artifact WHERE name = 'log'"))


def downgrade() -> None:
    op.drop_index("ix_run_log_run_id", table_name="run_log")
    op.drop_table("run_log")
