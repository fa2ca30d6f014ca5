"""Interpreters that repros run under: the mapping `label -> python`, and what each one is.

A probe runs the (configured, trusted) interpreter once on the host and reports its Python and
torch versions and the directories it needs, which the sandbox binds read-only. The torch
version comes from the installed distribution's metadata, so probing does not import torch.
Probes are cached per interpreter path for the life of the process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache

from app import domain

# Bound read-only into every sandbox anyway; interpreter paths below them need no own bind.
SYSTEM_DIRS = ("/usr/", "/etc/")

_PROBE = r"""
import json, os, site, sys
try:
    from importlib.metadata import version
    torch_version = version("torch")
except Exception:
    torch_version = None
paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
paths += site.getsitepackages() + [p for p in sys.path if p and os.path.isdir(p)]
print(json.dumps({
    "executable": os.path.realpath(sys.executable),
    "python_version": ".".join(map(str, sys.version_info[:3])),
    "torch_version": torch_version,
    "paths": paths,
}))
"""


class InterpreterError(ValueError):
    """An environment mapping or interpreter that cannot be used."""


@dataclass(frozen=True)
class Interpreter:
    """A probed interpreter: versions, and the host directories it reads (minimal cover)."""

    python: str
    executable: str
    python_version: str
    torch_version: str | None
    paths: tuple[str, ...]


def parse_environments(spec: str | dict[str, str] | None, default_python: str = sys.executable) -> dict[str, str]:
    """`"2.11=/envs/a/bin/python,2.13=/envs/b/bin/python"` (or a dict) -> {label: python}.

    Empty input means the caller's own interpreter, under the label `local`.
    """
    try:
        return domain.parse_environments(spec, default_python)
    except ValueError as exc:
        raise InterpreterError(str(exc)) from None


def minimal_cover(paths: list[str]) -> tuple[str, ...]:
    """Real, existing directories with those nested inside another one removed, sorted."""
    real = sorted({os.path.realpath(p) for p in paths if p and os.path.isdir(p)})
    real = [p for p in real if not p.startswith(SYSTEM_DIRS)]
    kept: list[str] = []
    for path in real:
        if not any(path == k or path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return tuple(kept)


@lru_cache(maxsize=64)
def probe_interpreter(python: str) -> Interpreter:
    """Run `python` once (clean environment, from /) and describe it. Cached per path."""
    try:
        completed = subprocess.run(
            [python, "-c", _PROBE],
            capture_output=True, text=True, timeout=60, cwd="/",
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InterpreterError(f"cannot run interpreter {python!r}: {exc}") from exc
    if completed.returncode != 0:
        raise InterpreterError(f"interpreter {python!r} failed to start: {completed.stderr.strip()[-500:]}")
    info = json.loads(completed.stdout.strip().splitlines()[-1])
    return Interpreter(
        python=python,
        executable=info["executable"],
        python_version=info["python_version"],
        torch_version=info["torch_version"],
        paths=minimal_cover(info["paths"] + [os.path.dirname(os.path.dirname(info["executable"]))]),
    )
