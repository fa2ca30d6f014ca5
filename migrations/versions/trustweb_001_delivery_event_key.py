"""delivery.event_key: what a delivery is about (a comment's id, a workflow run's id and
attempt), unique: the same event replayed under a new X-GitHub-Delivery id is a duplicate.

Revision ID: trustweb_001
Revises: status_ops_001
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "trustweb_001"
down_revision = "ciclass_001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("delivery", schema=None) as batch_op:
        batch_op.add_column(sa.Column("event_key", sa.String(length=200), nullable=True))
        batch_op.create_index("uq_delivery_event_key", ["event_key"], unique=True)


def downgrade() -> None:
    with op.batch_alter_table("delivery", schema=None) as batch_op:
        batch_op.drop_index("uq_delivery_event_key")
        batch_op.drop_column("event_key")
