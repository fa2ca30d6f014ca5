"""`scrub`: every stage runs locally with no GitHub and no server, and the service starts here.

Each command lives in its own module with a `register(app)` function. `--json` prints one
JSON object on stdout; human output and progress go to stderr.
"""

from __future__ import annotations

import typer

from app.cli import bisect, cilog, fuzz, issue, minimize, repro, service

app = typer.Typer(
    name="scrub",
    help="Scrubbot: reproduce, classify, bisect and minimize bug reports and CI failures.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

for module in (service, repro, minimize, issue, cilog, bisect, fuzz):
    module.register(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
