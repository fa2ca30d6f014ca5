"""The GPU facts a report states: model, driver, the CUDA version the driver supports, count.

Read on the host (trusted) from what the NVIDIA kernel driver publishes, without running any
CUDA code: `/proc/driver/nvidia/version` (the driver), `/proc/driver/nvidia/gpus/*/information`
(one directory per GPU: `Model: NVIDIA H100 80GB HBM3`), and `nvidia-smi`'s header line for
the CUDA version when the tool is installed. A host without the driver has no facts (None).
The torch build's own CUDA version comes from its `torch/version.py`
(`app.engine.envs.variants`); a report states both, since a build newer than the driver
supports fails at `cuInit`.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

PROC = Path("/proc/driver/nvidia")
_DRIVER = re.compile(r"Kernel Module\s+(?:for \S+\s+)?([\d.]+)")
_MODEL = re.compile(r"^Model:\s*(.+)$", re.MULTILINE)
_CUDA = re.compile(r"CUDA Version:\s*([\d.]+)")


@dataclass(frozen=True)
class GpuFacts:
    models: tuple[str, ...]
    driver: str
    cuda_driver: str = ""  # the newest CUDA the driver supports (nvidia-smi), "" when unknown

    @property
    def count(self) -> int:
        return len(self.models)

    def describe(self) -> str:
        names = ", ".join(sorted(set(self.models))) or "no GPU listed"
        cuda = f", CUDA {self.cuda_driver} supported" if self.cuda_driver else ""
        return f"{self.count} x {names} (driver {self.driver or 'unknown'}{cuda})"

    def to_dict(self) -> dict:
        return {**asdict(self), "count": self.count}


def parse_driver_version(text: str) -> str:
    found = _DRIVER.search(text)
    return found.group(1) if found else ""


def parse_model(text: str) -> str:
    found = _MODEL.search(text)
    return found.group(1).strip() if found else ""


def parse_smi_cuda(text: str) -> str:
    found = _CUDA.search(text)
    return found.group(1) if found else ""


def gpu_facts(proc: Path = PROC, smi: str | None = None) -> GpuFacts | None:
    """The host's GPU facts, or None without the NVIDIA driver."""
    version = proc / "version"
    if not version.is_file():
        return None
    models = tuple(parse_model(info.read_text(errors="replace"))
                   for info in sorted(proc.glob("gpus/*/information")))
    cuda = ""
    tool = smi or shutil.which("nvidia-smi")
    if tool:
        try:
            cuda = parse_smi_cuda(subprocess.run([tool], capture_output=True, text=True, timeout=30).stdout)
        except (OSError, subprocess.TimeoutExpired):
            cuda = ""
    return GpuFacts(tuple(m for m in models if m), parse_driver_version(version.read_text(errors="replace")), cuda)
