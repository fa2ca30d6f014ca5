"""CI failure history: where each signature failed and how it was classified
(`failure_occurrence`), the issues and PRs linked to it (`signature_link`), and on
`failure_signature` its source (`ci` / `issue`), error key, flaky flag and latest label.

Revision ID: ciclass_001
Revises: status_ops_001
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "ciclass_001"
down_revision = "status_ops_001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("failure_signature", schema=None) as batch_op:
        batch_op.add_column(sa.Column("source", sa.String(length=10), nullable=False, server_default="ci"))
        batch_op.add_column(sa.Column("error_key", sa.String(length=500), nullable=False, server_default=""))
        batch_op.add_column(sa.Column("flaky", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column("flaky_evidence", sa.String(length=500), nullable=False, server_default=""))
        batch_op.add_column(sa.Column("classification", sa.String(length=30), nullable=False, server_default=""))
    op.create_index("ix_failure_signature_error", "failure_signature", ["repo", "error_key"])
    op.create_table(
        "failure_occurrence",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("repo", sa.String(length=200), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("workflow_run_id", sa.BigInteger(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("head_sha", sa.String(length=64), nullable=False),
        sa.Column("head_branch", sa.String(length=300), nullable=False),
        sa.Column("event", sa.String(length=60), nullable=False),
        sa.Column("head_repo", sa.String(length=200), nullable=False),
        sa.Column("workflow", sa.String(length=300), nullable=False),
        sa.Column("job", sa.String(length=500), nullable=False),
        sa.Column("pull_requests", sa.JSON(), nullable=False),
        sa.Column("label", sa.String(length=30), nullable=False),
        sa.Column("classification", sa.JSON(), nullable=False),
        sa.Column("ingest_run_id", sa.Integer(), sa.ForeignKey("run.id"), nullable=True),
        sa.Column("passed_on_rerun", sa.Boolean(), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("repo", "fingerprint", "workflow_run_id", "attempt", name="uq_occurrence"),
    )
    op.create_index("ix_occurrence_signature", "failure_occurrence", ["repo", "fingerprint"])
    op.create_table(
        "signature_link",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("repo", sa.String(length=200), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("title", sa.String(length=300), nullable=False),
        sa.Column("relation", sa.String(length=60), nullable=False),
        sa.Column("run_id", sa.Integer(), sa.ForeignKey("run.id"), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("repo", "fingerprint", "kind", "number", name="uq_signature_link"),
    )
    op.create_index("ix_signature_link_repo", "signature_link", ["repo"])


def downgrade() -> None:
    op.drop_index("ix_signature_link_repo", table_name="signature_link")
    op.drop_table("signature_link")
    op.drop_index("ix_occurrence_signature", table_name="failure_occurrence")
    op.drop_table("failure_occurrence")
    op.drop_index("ix_failure_signature_error", table_name="failure_signature")
    with op.batch_alter_table("failure_signature", schema=None) as batch_op:
        for name in ("classification", "flaky_evidence", "flaky", "error_key", "source"):
            batch_op.drop_column(name)
