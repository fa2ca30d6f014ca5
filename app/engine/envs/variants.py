"""Which build of torch an environment holds, and which builds a worker may use.

A build's *variant* is its accelerator flavour: `cpu`, `cu126` (CUDA 12.6), `rocm6.2`. It comes
from the version's local tag (`2.13.0+cpu`, `2.10.0.dev20250901+cu126`) or, for a wheel without
one (PyPI's Linux wheels are CUDA builds), from the `cuda` / `hip` fields of `torch/version.py`.
Read from that file, never by importing torch (the facts of an environment must not cost a
torch import, nor run any of its code).

A GPU worker runs only accelerator builds: a CPU build there would report "no CUDA" as the bug.
A CPU worker prefers `cpu` builds and may run an accelerator build's CPU paths.
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass
from pathlib import Path

from app.torch_releases import preference, usable_on, variant_of

__all__ = ["TorchBuild", "build_from_version_py", "installed_build", "parse_version_py", "preference",
           "usable_on", "variant_of"]



@dataclass(frozen=True)
class TorchBuild:
    """An installed (or downloaded) torch's build facts."""

    version: str  # `2.13.0+cpu`, `2.10.0.dev20250901+cu126`
    git_version: str  # the commit it was built from (`torch.version.git_version`)
    cuda: str | None = None  # `12.6`, None for a CPU build
    hip: str | None = None

    @property
    def variant(self) -> str:
        return variant_of(self.version, self.cuda, self.hip)

    @property
    def accelerated(self) -> bool:
        return self.variant != "cpu"

    def to_dict(self) -> dict:
        return {**asdict(self), "variant": self.variant}


def parse_version_py(text: str) -> dict[str, str | None]:
    """The constants of a `torch/version.py` (`__version__`, `git_version`, `cuda`, `hip`)."""
    found: dict[str, str | None] = {}
    for node in ast.parse(text).body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
            node.target if isinstance(node, ast.AnnAssign) else None
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant) and \
                (value.value is None or isinstance(value.value, str)):
            found[target.id] = value.value
    return found


def build_from_version_py(text: str) -> TorchBuild:
    facts = parse_version_py(text)
    if not facts.get("__version__") or not facts.get("git_version"):
        raise ValueError("torch/version.py names no __version__ or git_version")
    return TorchBuild(str(facts["__version__"]), str(facts["git_version"]), facts.get("cuda"), facts.get("hip"))


def installed_build(site_packages: Path) -> TorchBuild | None:
    """The torch installed in `site_packages`, from its `torch/version.py`; None without one."""
    path = Path(site_packages) / "torch" / "version.py"
    try:
        return build_from_version_py(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, SyntaxError):
        return None
