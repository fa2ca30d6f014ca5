"""`scrub env add|list|rm`: PyTorch releases on tap for `scrub bisect` and the issue pipeline.

`scrub env add 2.14.1` creates `<data dir>/envs/2.14.1/` with a pinned `torch==2.14.1` (uv when
on PATH, else pip; `--index-url` or `SCRUB_TORCH_INDEX_URL` picks the package index, e.g. the
CPU-only builds). Once provisioned, a release is an environment label everywhere
(`--python 2.14.1`, `--envs 2.13.0,2.14.1`) without `SCRUB_ENVIRONMENTS`; when that variable
is set, it alone names the environments.
"""

from __future__ import annotations

from typing import Any

import typer
from rich.table import Table

from app.cli.output import emit_json, fail, stderr
from app.cli.progress import counted

env_app = typer.Typer(help="Provision PyTorch releases into cached environments (for bisection).",
                      no_args_is_help=True)


def provision_release(version: str, settings: Any, *, index_url: str | None = None, installer: str | None = None,
                      force: bool = False, quiet: bool = False) -> Any:
    """Provision one release with a progress spinner (stderr, terminals only); errors exit 2."""
    from app.engine.envs import ProvisionError, parse_version, provision

    try:
        version = parse_version(version)
    except ValueError as exc:
        fail(str(exc))
    store = settings.env_store
    settings.ensure_data_dir()  # made private (0700) here when this is the first command run
    existing = store.get(version)
    if existing and existing.complete and not force:
        if not quiet:
            stderr.print(f"torch {version} is already provisioned in {existing.path}", markup=False)
        return existing
    index = index_url if index_url is not None else (settings.torch_index_url or None)
    stderr.print(f"provisioning torch=={version} into {store.path(version)}"
                 + (f" from {index}" if index else ""), markup=False, highlight=False)
    lines: list[str] = []
    try:
        with counted(f"torch {version}", None) as advance:
            def on_line(line: str) -> None:
                lines.append(line)
                advance(0, description=f"torch {version}: {line[:90]}")

            env = provision(version, store, installer=installer or settings.env_installer, index_url=index,
                            force=force, on_line=on_line)
    except ProvisionError as exc:
        fail(f"could not provision torch {version}: {exc}")
    stderr.print(f"torch {env.info.get('torch')} ready in {env.path} ({env.info.get('installer')}, "
                 f"{env.info.get('seconds')} s)", markup=False, highlight=False)
    return env


@env_app.command("add")
def add(
    versions: list[str] = typer.Argument(..., metavar="VERSION...", help="torch releases, e.g. 2.13.0 2.14.1"),
    index_url: str = typer.Option(None, "--index-url", help="package index (default SCRUB_TORCH_INDEX_URL, "
                                  "else PyPI); e.g. https://download.pytorch.org/whl/cpu"),
    installer: str = typer.Option(None, "--installer", help="auto (uv when on PATH), uv or pip"),
    force: bool = typer.Option(False, "--force", help="rebuild even when already provisioned"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object on stdout"),
) -> None:
    """Provision torch releases into cached environments under the data dir."""
    from app.settings import get_settings

    settings = get_settings()
    envs = [provision_release(v, settings, index_url=index_url, installer=installer, force=force) for v in versions]
    if as_json:
        emit_json({"environments": [env.to_dict() for env in envs]})


@env_app.command("list")
def list_command(as_json: bool = typer.Option(False, "--json", help="print one JSON object on stdout")) -> None:
    """The environments repros and bisection use, oldest first, and where each comes from."""
    from app.settings import get_settings

    settings = get_settings()
    provisioned = settings.env_store.list()
    environments = settings.environment_map
    source = "SCRUB_ENVIRONMENTS" if settings.environments.strip() else "provisioned"
    if as_json:
        emit_json({"source": source, "environments": environments,
                   "provisioned": [env.to_dict() for env in provisioned]})
        return
    table = Table(title=f"environments ({'SCRUB_ENVIRONMENTS' if source != 'provisioned' else 'provisioned + this interpreter'})")
    for column in ("label", "python", "status"):
        table.add_column(column, overflow="fold")
    by_python = {str(env.python): env for env in provisioned}
    for label, python in environments.items():
        env = by_python.get(python)
        status = "provisioned" if env else ("configured" if source != "provisioned" else "this interpreter")
        table.add_row(label, python, status)
    for env in provisioned:
        if not env.complete:
            table.add_row(env.version, str(env.python), "incomplete: run `scrub env add --force " + env.version + "`")
        elif source != "provisioned":
            table.add_row(env.version, str(env.python), "provisioned, unused while SCRUB_ENVIRONMENTS is set")
    stderr.print(table)


@env_app.command("rm")
def remove(versions: list[str] = typer.Argument(..., metavar="VERSION...", help="releases to delete")) -> None:
    """Delete provisioned environments."""
    from app.settings import get_settings

    store = get_settings().env_store
    for version in versions:
        try:
            removed = store.remove(version)
        except ValueError as exc:
            fail(str(exc))
        if not removed:
            fail(f"torch {version} is not provisioned (see `scrub env list`)")
        stderr.print(f"removed {store.root / version}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(env_app, name="env")
