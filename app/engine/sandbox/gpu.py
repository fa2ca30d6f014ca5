"""The GPU facts a report states: model, driver, the CUDA version the driver supports, count.

Read on the host (trusted) from what the NVIDIA kernel driver publishes, without running any
CUDA code: `/proc/driver/nvidia/version` (the driver), `/proc/driver/nvidia/gpus/*/information`
(one directory per GPU: `Model: NVIDIA H100 80GB HBM3`), and `nvidia-smi`'s header line for
the CUDA version when the tool is installed. Where the kernel publishes no /proc files (a
microVM or gVisor host whose driver is reached another way) but `nvidia-smi` answers, its
`--query-gpu` gives the models and the driver. A host with neither has no facts (None).
The torch build's own CUDA version comes from its `torch/version.py`
(`app.engine.envs.variants`); a report states both, since a build newer than the driver
supports fails at `cuInit`.
"""

from __future__ import annotations

import glob
import os
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


def parse_smi_query(text: str) -> tuple[tuple[str, ...], str]:
    """`nvidia-smi --query-gpu=name,driver_version --format=csv,noheader`: (models, driver)."""
    rows = [[cell.strip() for cell in line.split(",")] for line in text.splitlines() if line.count(",") == 1]
    return tuple(name for name, _ in rows if name), (rows[0][1] if rows else "")


def _smi(tool: str, *args: str) -> str:
    try:
        return subprocess.run([tool, *args], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def gpu_facts(proc: Path = PROC, smi: str | None = None) -> GpuFacts | None:
    """The host's GPU facts, or None without the NVIDIA driver."""
    version = proc / "version"
    tool = smi or shutil.which("nvidia-smi")
    cuda = parse_smi_cuda(_smi(tool)) if tool else ""
    if not version.is_file():
        models, driver = parse_smi_query(_smi(tool, "--query-gpu=name,driver_version", "--format=csv,noheader")) \
            if tool else ((), "")
        return GpuFacts(models, driver, cuda) if models else None
    models = tuple(parse_model(info.read_text(errors="replace"))
                   for info in sorted(proc.glob("gpus/*/information")))
    return GpuFacts(tuple(m for m in models if m), parse_driver_version(version.read_text(errors="replace")), cuda)


def driver_library_dirs(environ: dict[str, str] | None = None) -> tuple[str, ...]:
    """The directories on the worker's `LD_LIBRARY_PATH` that hold the CUDA driver library
    (`libcuda.so.1`), as container and microVM hosts install it (`/usr/local/nvidia/lib64`)
    instead of registering it with `ldconfig`. A GPU sandbox gets exactly these on its own
    `LD_LIBRARY_PATH`, bound read-only: without them `torch.cuda.is_available()` is False
    inside while it is True outside. Computed by the worker, never taken from a repro."""
    environ = os.environ if environ is None else environ
    dirs = []
    for entry in environ.get("LD_LIBRARY_PATH", "").split(":"):
        if entry.startswith("/") and entry not in dirs and glob.glob(os.path.join(glob.escape(entry), "libcuda.so*")):
            dirs.append(entry)
    return tuple(dirs)
