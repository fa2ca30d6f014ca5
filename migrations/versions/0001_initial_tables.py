"""Initial tables: delivery, run, stage_event, artifact, failure_signature.

Revision ID: 0001
Revises: 
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('run',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=30), nullable=False),
    sa.Column('repo', sa.String(length=200), nullable=False),
    sa.Column('issue', sa.Integer(), nullable=True),
    sa.Column('target', sa.String(length=500), nullable=False),
    sa.Column('trigger', sa.String(length=200), nullable=False),
    sa.Column('status', sa.String(length=30), nullable=False),
    sa.Column('verdict', sa.String(length=500), nullable=True),
    sa.Column('queue', sa.String(length=30), nullable=False),
    sa.Column('installation_id', sa.Integer(), nullable=True),
    sa.Column('params', sa.JSON(), nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('ended_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_run_created_at'), ['created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_run_kind'), ['kind'], unique=False)
        batch_op.create_index(batch_op.f('ix_run_repo'), ['repo'], unique=False)
        batch_op.create_index(batch_op.f('ix_run_status'), ['status'], unique=False)

    op.create_table('artifact',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('kind', sa.String(length=30), nullable=False),
    sa.Column('content', sa.Text(), nullable=True),
    sa.Column('path', sa.String(length=1000), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['run.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('run_id', 'name', name='uq_artifact_run_name')
    )
    with op.batch_alter_table('artifact', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_artifact_run_id'), ['run_id'], unique=False)

    op.create_table('delivery',
    sa.Column('id', sa.String(length=100), nullable=False),
    sa.Column('event', sa.String(length=100), nullable=False),
    sa.Column('action', sa.String(length=100), nullable=True),
    sa.Column('repo', sa.String(length=200), nullable=True),
    sa.Column('received_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('outcome', sa.String(length=200), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['run_id'], ['run.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('failure_signature',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('repo', sa.String(length=200), nullable=False),
    sa.Column('fingerprint', sa.String(length=64), nullable=False),
    sa.Column('test_id', sa.String(length=1000), nullable=False),
    sa.Column('job', sa.String(length=500), nullable=False),
    sa.Column('kind', sa.String(length=60), nullable=False),
    sa.Column('exception', sa.String(length=300), nullable=False),
    sa.Column('message', sa.Text(), nullable=False),
    sa.Column('first_seen', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_seen', sa.DateTime(timezone=True), nullable=False),
    sa.Column('count', sa.Integer(), nullable=False),
    sa.Column('run_ids', sa.JSON(), nullable=False),
    sa.Column('linked_run_id', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['linked_run_id'], ['run.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('repo', 'fingerprint', name='uq_signature_repo_fp')
    )
    with op.batch_alter_table('failure_signature', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_failure_signature_repo'), ['repo'], unique=False)

    op.create_table('stage_event',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('stage', sa.String(length=60), nullable=False),
    sa.Column('status', sa.String(length=30), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('ended_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('summary', sa.Text(), nullable=False),
    sa.Column('output', sa.JSON(), nullable=False),
    sa.Column('attempt', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['run.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('stage_event', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_stage_event_run_id'), ['run_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('stage_event', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_stage_event_run_id'))

    op.drop_table('stage_event')
    with op.batch_alter_table('failure_signature', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_failure_signature_repo'))

    op.drop_table('failure_signature')
    op.drop_table('delivery')
    with op.batch_alter_table('artifact', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_artifact_run_id'))

    op.drop_table('artifact')
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_run_status'))
        batch_op.drop_index(batch_op.f('ix_run_repo'))
        batch_op.drop_index(batch_op.f('ix_run_kind'))
        batch_op.drop_index(batch_op.f('ix_run_created_at'))

    op.drop_table('run')
