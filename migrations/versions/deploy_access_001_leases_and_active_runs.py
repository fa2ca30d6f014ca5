"""Run leases (lease_owner, lease_expires_at, attempts) and one active run per target
(active_key + the partial unique index uq_run_active_key).

Existing runs get their key; of several active runs with the same key (the race this index
prevents) only the newest keeps it, so the index can be built.

Revision ID: deploy_access_001
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "deploy_access_001"
down_revision = "0001"
branch_labels = None
depends_on = None

ACTIVE_SQL = "status IN ('queued', 'running', 'awaiting_approval')"


def _key(kind: str, repo: str, issue: int | None, params: object) -> str | None:
    if isinstance(params, str):
        params = json.loads(params or "{}")
    if kind == "issue" and repo and issue:
        return f"issue:{repo.lower()}#{issue}"
    fingerprint = (params or {}).get("fingerprint") if isinstance(params, dict) else None
    if kind == "ci_failure" and isinstance(fingerprint, str) and fingerprint:
        return f"ci:{repo.lower()}:{fingerprint}"[:300]
    return None


def upgrade() -> None:
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.add_column(sa.Column("active_key", sa.String(length=300), nullable=True))
        batch_op.add_column(sa.Column("lease_owner", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"))
    connection = op.get_bind()
    rows = connection.execute(sa.text(f"SELECT id, kind, repo, issue, params, {ACTIVE_SQL} AS active FROM run ORDER BY id DESC"))
    taken: set[str] = set()
    for run_id, kind, repo, issue, params, active in rows.fetchall():
        key = _key(kind, repo or "", issue, params)
        if key is None or (active and key in taken):
            continue
        if active:
            taken.add(key)
        connection.execute(sa.text("UPDATE run SET active_key = :key WHERE id = :id"), {"key": key, "id": run_id})
    if connection.dialect.name != "sqlite":
        # On SQLite this would rebuild `run`, which tables pointing at it (artifact, stage_event)
        # forbid while foreign keys are on; the server default of 0 is harmless there.
        with op.batch_alter_table("run", schema=None) as batch_op:
            batch_op.alter_column("attempts", server_default=None)
    op.create_index("uq_run_active_key", "run", ["active_key"], unique=True,
                    sqlite_where=sa.text(ACTIVE_SQL), postgresql_where=sa.text(ACTIVE_SQL))


def downgrade() -> None:
    op.drop_index("uq_run_active_key", table_name="run")
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.drop_column("attempts")
        batch_op.drop_column("lease_expires_at")
        batch_op.drop_column("lease_owner")
        batch_op.drop_column("active_key")
