"""Pipelines: one package per run kind (`KIND` in its `__init__`), the shared `kit/`, and the machinery
that runs them (`base`, `state`, `memory`, `kind`, `registry`, `commands`)."""
