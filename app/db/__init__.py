"""Persistence: SQLModel tables, engine/session factory and the queries shells use."""
