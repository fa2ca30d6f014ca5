"""PyTorch releases on tap: the directory of provisioned environments, `<root>/<version>+<variant>/`.

An environment counts once its marker `scrub-env.json` exists (written last, after the
installed torch was checked); a directory without it is an interrupted install: listed as
incomplete, never used. Labels are release versions (`2.14.1`), sorted oldest first.

Environments are keyed by version AND variant (`2.14.1+cpu`, `2.14.1+cu126`: what
`torch/version.py` says was installed), so CPU and GPU workers can share one volume: a store
made for a GPU worker (`EnvStore(root, gpu=True)`) sees only accelerator builds, a CPU
worker's prefers `cpu` ones. Directories of the version-only layout (`<root>/2.14.1/`) still
count, with the variant their marker or their installed `torch/version.py` names.
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
_ENV_DIR = re.compile(r"^(\d+\.\d+\.\d+)(?:\+([\w.]+))?$")
_LOCAL_VARIANT = re.compile(r"\+(cpu|cu\d{2,4}|rocm[\d.]+|xpu)\b")
_CUDA_LINE = re.compile(r"^cuda\s*(?::[^=]*)?=\s*['\"]([\d.]+)['\"]", re.MULTILINE)
_HIP_LINE = re.compile(r"^hip\s*(?::[^=]*)?=\s*['\"]([\d.]+)['\"]", re.MULTILINE)
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


def variant_of(version: str, cuda: str | None = None, hip: str | None = None) -> str:
    """`cpu`, `cu126`, `rocm6.2`, ... from a version's local tag, else from the CUDA / HIP versions."""
    tagged = _LOCAL_VARIANT.search(version)
    if tagged:
        return tagged.group(1)
    if cuda:
        return "cu" + "".join(cuda.split(".")[:2])
    if hip:
        return "rocm" + ".".join(hip.split(".")[:2])
    return "cpu"


def usable_on(variant: str, *, gpu: bool) -> bool:
    """A GPU worker runs accelerator builds only (a CPU build there would report "no CUDA" as
    the bug); a CPU worker may run any build's CPU paths."""
    return variant != "cpu" if gpu else True


def preference(variant: str, *, gpu: bool) -> int:
    """Lower is better: a CPU worker's own `cpu` builds first; a GPU worker's CUDA builds."""
    if gpu:
        return 0 if variant.startswith("cu") else 1
    return 0 if variant == "cpu" else 1


def env_variant(path: Path, info: dict[str, Any]) -> str:
    """The variant of an environment: its marker's, else its installed `torch/version.py`'s."""
    if info.get("variant"):
        return str(info["variant"])
    for version_py in sorted(Path(path).glob("lib/python3*/site-packages/torch/version.py")):
        text = version_py.read_text(encoding="utf-8", errors="replace")
        cuda, hip = _CUDA_LINE.search(text), _HIP_LINE.search(text)
        return variant_of(str(info.get("torch", "")), cuda and cuda.group(1), hip and hip.group(1))
    return variant_of(str(info.get("torch", "")))


def release_of(version: str) -> str:
    """`2.13.0+cpu` -> `2.13.0` (the local build tag dropped)."""
    return version.split("+", 1)[0]


@dataclass(frozen=True)
class ProvisionedEnv:
    version: str
    path: Path
    complete: bool
    info: dict[str, Any]
    variant: str = "cpu"

    @property
    def label(self) -> str:
        return f"{self.version}+{self.variant}"

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "path": str(self.path), "python": str(self.python),
                "complete": self.complete, **self.info, "variant": self.variant}


class EnvStore:
    """Provisioned environments under `root` (created on first use), as a worker sees them:
    `gpu=True` keeps accelerator builds only."""

    def __init__(self, root: Path, gpu: bool = False) -> None:
        self.root = Path(root).absolute()
        self.gpu = gpu

    def path(self, version: str, variant: str | None = None) -> Path:
        """Where `version` (of `variant`) lives; without a variant, the one this worker would use
        (or the version-only path, for a build still to be made)."""
        version = parse_version(version)
        if variant:
            return self.root / f"{version}+{variant}"
        found = self.get(version)
        return found.path if found else self.root / version

    def _load(self, path: Path) -> ProvisionedEnv | None:
        match = _ENV_DIR.match(path.name)
        if not match or not path.is_dir():
            return None
        marker = path / MARKER
        info: dict[str, Any] = {}
        if marker.is_file():
            try:
                info = json.loads(marker.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                info = {}
        complete = bool(info) and (path / "bin" / "python").exists()
        variant = match.group(2) or env_variant(path, info)
        return ProvisionedEnv(version=match.group(1), path=path, complete=complete, info=info, variant=variant)

    def get(self, version: str) -> ProvisionedEnv | None:
        """The environment of `version` this worker would use: complete first, then its preferred variant."""
        version = parse_version(version)
        found = [env for env in self._all() if env.version == version]
        found.sort(key=lambda env: (not env.complete, preference(env.variant, gpu=self.gpu)))
        return found[0] if found else None

    def _all(self) -> list[ProvisionedEnv]:
        if not self.root.is_dir():
            return []
        found = [self._load(p) for p in self.root.iterdir()]
        return [env for env in found if env and usable_on(env.variant, gpu=self.gpu)]

    def list(self) -> list[ProvisionedEnv]:
        """Every environment directory this worker may use (complete or not), oldest release first."""
        return sorted(self._all(), key=lambda env: (version_key(env.version), env.variant))

    def interpreters(self) -> dict[str, str]:
        """{version: python} of the complete environments, oldest first (one variant per version)."""
        out: dict[str, str] = {}
        for env in sorted(self._all(), key=lambda e: preference(e.variant, gpu=self.gpu), reverse=True):
            if env.complete:
                out[env.version] = str(env.python)
        return dict(sorted(out.items(), key=lambda item: version_key(item[0])))

    def builds(self) -> dict[str, str]:
        """{`version+variant`: python} of the complete environments (what the build provider reads)."""
        return {env.label: str(env.python) for env in self.list() if env.complete}

    def mark_complete(self, path: Path, info: dict[str, Any]) -> None:
        (path / MARKER).write_text(json.dumps(info, indent=1, sort_keys=True), encoding="utf-8")

    def remove(self, version: str) -> bool:
        """Delete this worker's environments of `version`; False when there were none."""
        version = parse_version(version)
        doomed = [env.path for env in self._all() if env.version == version]
        for path in doomed:
            shutil.rmtree(path)
        return bool(doomed)


def merge_interpreters(provisioned: dict[str, str], local_python: str, local_torch: str | None) -> dict[str, str]:
    """Provisioned releases plus this interpreter under its own torch release (unless that
    release is provisioned too), oldest first. Nothing provisioned: `{"local": local_python}`."""
    if not provisioned:
        return {"local": local_python}
    merged = dict(provisioned)
    if local_torch and release_of(local_torch) not in merged:
        merged[release_of(local_torch)] = local_python
    return dict(sorted(merged.items(), key=lambda item: version_key(item[0])))
