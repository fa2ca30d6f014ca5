"""`scrub` commands of this group (being built)."""

import typer


def register(app: typer.Typer) -> None:
    pass
