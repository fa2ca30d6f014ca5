"""Throwaway interpreters for bisection tests: venvs that differ only in their prefix name.

They live under /var/tmp, not /tmp: the sandbox mounts a private /tmp, so an interpreter
under the host's /tmp would be invisible inside it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# A repro that "reproduces" (raises) on environments whose name ends in one of `broken`.
PREFIX_BUG = "import sys\nif sys.prefix.endswith({broken!r}):\n    raise RuntimeError('the bug is here')\n"


def make_envs(labels: list[str]) -> tuple[dict[str, str], Path]:
    """`{label: python}` in order, and the directory to delete afterwards."""
    root = Path(tempfile.mkdtemp(prefix="scrub-envs-", dir="/var/tmp"))
    envs = {}
    for label in labels:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / label)], check=True)
        envs[label] = str(root / label / "bin" / "python")
    return envs, root


def remove(root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)
