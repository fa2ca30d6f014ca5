"""Pipelines: one module per job kind, each a list of named, checkpointed stages."""
