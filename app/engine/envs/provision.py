"""Create a virtual environment with one pinned torch release: `provision("2.14.1", store)`.

uv when it is on PATH (`installer="auto"`), else the standard `venv` module and the base
interpreter's pip (`pip --python VENV`, pip >= 22.3). The only
requirement ever installed is `torch==<version>`: never an unpinned torch. `index_url` is
passed to the installer (e.g. `https://download.pytorch.org/whl/cpu` for CPU-only builds);
None keeps the installer's own configuration (PyPI, or what pip.conf / uv.toml say).

The environment is built in place and marked complete last, after the installed torch was
checked; an interrupted install leaves an incomplete directory that the next `provision`
replaces. A lock file serializes two provisions of one release.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from app.engine.envs.once import exclusively
from app.torch_releases import EnvStore, ProvisionedEnv, env_variant, parse_version, release_of, usable_on

Installer = str  # "auto" | "uv" | "pip"
_CHECK = "from importlib.metadata import version; import sys; print(version('torch'), sys.version.split()[0])"


class ProvisionError(RuntimeError):
    """The environment could not be created; the message says which step and why."""


def pick_installer(installer: Installer = "auto") -> str:
    if installer not in ("auto", "uv", "pip"):
        raise ProvisionError(f"installer {installer!r} is not auto, uv or pip")
    if installer == "auto":
        return "uv" if shutil.which("uv") else "pip"
    if installer == "uv" and not shutil.which("uv"):
        raise ProvisionError("installer uv asked for, but uv is not on PATH (pip install uv)")
    return installer


def install_commands(version: str, target: Path, *, installer: str, base_python: str,
                     index_url: str | None = None) -> list[list[str]]:
    """The commands that create `target` with `torch==version` (pinned, always)."""
    requirement = f"torch=={parse_version(version)}"
    python = str(target / "bin" / "python")
    index = ["--index-url", index_url] if index_url else []
    if installer == "uv":
        uv = shutil.which("uv") or "uv"
        return [[uv, "venv", "--quiet", "--python", base_python, str(target)],
                [uv, "pip", "install", "--python", python, *index, requirement]]
    # The base interpreter's pip installs into the venv (`pip --python`): no pip copied into it.
    return [[base_python, "-m", "venv", "--without-pip", str(target)],
            [base_python, "-m", "pip", "--python", python, "install", "--progress-bar", "off", "--no-input",
             *index, requirement]]


def _stream(command: list[str], on_line: Callable[[str], None]) -> tuple[int, list[str]]:
    """Run `command`, feeding each output line to `on_line`; (exit code, last lines)."""
    tail: list[str] = []
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRUB_")}
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env, stdin=subprocess.DEVNULL) as process:
        assert process.stdout is not None
        for raw in process.stdout:
            line = raw.rstrip()
            if line:
                tail = (tail + [line])[-20:]
                on_line(line)
        return process.wait(), tail


def provision(version: str, store: EnvStore, *, installer: Installer = "auto", index_url: str | None = None,
              base_python: str = sys.executable, force: bool = False,
              on_line: Callable[[str], None] = lambda line: None) -> ProvisionedEnv:
    """The complete environment of `version`: reused when it exists (unless `force`), else built.

    Built under a temporary name, then moved to `<version>+<variant>` once the installed
    `torch/version.py` says which variant the index gave (a GPU worker's store refuses a CPU
    build: that index cannot serve it)."""
    version = parse_version(version)
    tool = pick_installer(installer)
    with exclusively(store.root, version):
        existing = store.get(version)
        if existing and existing.complete and not force:
            return existing
        target = store.root / f".{version}.building"
        if target.exists():
            shutil.rmtree(target)
        started = time.monotonic()
        for command in install_commands(version, target, installer=tool, base_python=base_python,
                                        index_url=index_url):
            try:
                code, tail = _stream(command, on_line)
            except OSError as exc:
                raise ProvisionError(f"cannot run {command[0]}: {exc}") from None
            if code != 0:
                raise ProvisionError(f"{' '.join(command[:3])} ... failed (exit {code}): " + "\n".join(tail[-8:]))
        check = subprocess.run([str(target / "bin" / "python"), "-c", _CHECK], capture_output=True, text=True,
                               timeout=120, cwd="/")
        installed = check.stdout.split()
        if check.returncode != 0 or not installed or release_of(installed[0]) != version:
            raise ProvisionError(f"torch {version} did not install as asked: {(check.stdout + check.stderr)[-400:]}")
        variant = env_variant(target, {"torch": installed[0]})
        if not usable_on(variant, gpu=store.gpu):
            shutil.rmtree(target)
            raise ProvisionError(f"{index_url or 'the default index'} gave a {variant} build of torch {version}; "
                                 "a GPU worker needs an accelerator build (SCRUB_TORCH_INDEX_URL, e.g. "
                                 "https://download.pytorch.org/whl/cu126)")
        store.mark_complete(target, {"torch": installed[0], "python_version": installed[1], "installer": tool,
                                     "variant": variant, "index_url": index_url or "",
                                     "seconds": round(time.monotonic() - started, 1)})
        final = store.root / f"{version}+{variant}"
        if final.exists():
            shutil.rmtree(final)
        target.rename(final)
    env = store.get(version)
    assert env is not None and env.complete
    return env
