"""`scrub`: every stage runs locally with no GitHub and no server, and the service starts here.

Each command lives in its own module with a `register(app)` function. `--json` prints one
JSON object on stdout; human output and progress go to stderr. Exit codes: 0 ran and
reproduced (or came out as expected), 1 ran and did not, 2 usage or input error
(`app.cli.output`).
"""

from __future__ import annotations

import sys

import typer
from typer.core import TyperOption

from app.cli import bisect, cilog, demo, envs, fuzz, issue, minimize, repro, service, setup

app = typer.Typer(
    name="scrub",
    help="Scrubbot: reproduce, classify, bisect and minimize bug reports and CI failures.\n\n"
    "Exit codes: 0 = ran and reproduced (or as expected), 1 = ran and did not, 2 = usage or input error.",
    no_args_is_help=True,
    add_completion=True,  # `scrub --install-completion` (bash, zsh, fish, PowerShell)
    pretty_exceptions_enable=False,
)

def _flag_shows_no_type(option: TyperOption, ctx: object) -> str | None:
    """Help lists `--json` alone, not `--json <bool>`: a flag takes no value to describe."""
    return None if option.is_flag else _typed_display(option, ctx)


_typed_display = TyperOption.display_type_rich
TyperOption.display_type_rich = _flag_shows_no_type  # type: ignore[method-assign]

for module in (service, repro, minimize, issue, cilog, bisect, envs, demo, fuzz, setup):
    module.register(app)


def version_text() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        own = version("scrubbot")
    except PackageNotFoundError:
        own = "unknown (not installed)"
    try:
        torch = version("torch")
    except PackageNotFoundError:
        torch = "not installed"
    return f"scrub {own} (torch {torch} in this interpreter)"


@app.callback(invoke_without_command=True)
def _root(version: bool = typer.Option(False, "--version", help="print the version and exit", is_eager=True)) -> None:
    """The root options (`--version`); the help text is the Typer app's."""
    if version:
        typer.echo(version_text())
        raise typer.Exit(0)


def main() -> None:
    from app.settings import ConfigError

    try:
        app()
    except ConfigError as exc:  # one sentence naming the setting, never a traceback
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
