"""PyTorch releases on tap: the directory of provisioned environments, `<root>/<version>/`.

An environment counts once its marker `scrub-env.json` exists (written last, after the
installed torch was checked); a directory without it is an interrupted install: listed as
incomplete, never used. Labels are release versions (`2.14.1`), sorted oldest first.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MARKER = "scrub-env.json"
_RELEASE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
_ANY_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?")


def parse_version(text: str) -> str:
    """A full torch release `X.Y.Z` (what `torch==X.Y.Z` pins), or ValueError with an example."""
    text = text.strip().removeprefix("v").removeprefix("torch==")
    if not _RELEASE.match(text):
        raise ValueError(f"{text!r} is not a torch release; give one like 2.14.1")
    return text


def version_key(label: str) -> tuple[int, ...]:
    """Sort key of a version-like label (`2.13.0+cpu` -> (2, 13, 0)); others sort first, by name."""
    match = _ANY_VERSION.match(label)
    if not match:
        return ()
    return tuple(int(part or 0) for part in match.groups())


def release_of(version: str) -> str:
    """`2.13.0+cpu` -> `2.13.0` (the local build tag dropped)."""
    return version.split("+", 1)[0]


@dataclass(frozen=True)
class ProvisionedEnv:
    version: str
    path: Path
    complete: bool
    info: dict[str, Any]

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "path": str(self.path), "python": str(self.python),
                "complete": self.complete, **self.info}


class EnvStore:
    """Provisioned environments under `root` (created on first use)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).absolute()

    def path(self, version: str) -> Path:
        return self.root / parse_version(version)

    def get(self, version: str) -> ProvisionedEnv | None:
        path = self.path(version)
        if not path.is_dir():
            return None
        marker = path / MARKER
        info: dict[str, Any] = {}
        if marker.is_file():
            try:
                info = json.loads(marker.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                info = {}
        complete = bool(info) and (path / "bin" / "python").exists()
        return ProvisionedEnv(version=path.name, path=path, complete=complete, info=info)

    def list(self) -> list[ProvisionedEnv]:
        """Every environment directory (complete or not), oldest release first."""
        if not self.root.is_dir():
            return []
        found = [self.get(p.name) for p in self.root.iterdir() if p.is_dir() and _RELEASE.match(p.name)]
        return sorted((env for env in found if env), key=lambda env: version_key(env.version))

    def interpreters(self) -> dict[str, str]:
        """{version: python} of the complete environments, oldest first."""
        return {env.version: str(env.python) for env in self.list() if env.complete}

    def mark_complete(self, path: Path, info: dict[str, Any]) -> None:
        (path / MARKER).write_text(json.dumps(info, indent=1, sort_keys=True), encoding="utf-8")

    def remove(self, version: str) -> bool:
        """Delete `<root>/<version>`; False when there was none."""
        path = self.path(version)
        if not path.is_dir():
            return False
        shutil.rmtree(path)
        return True


def merge_interpreters(provisioned: dict[str, str], local_python: str, local_torch: str | None) -> dict[str, str]:
    """Provisioned releases plus this interpreter under its own torch release (unless that
    release is provisioned too), oldest first. Nothing provisioned: `{"local": local_python}`."""
    if not provisioned:
        return {"local": local_python}
    merged = dict(provisioned)
    if local_torch and release_of(local_torch) not in merged:
        merged[release_of(local_torch)] = local_python
    return dict(sorted(merged.items(), key=lambda item: version_key(item[0])))
