"""A stand-in `torch` release served from a local package index, so provisioning runs the real
installer (venv + pip) in seconds instead of downloading a real torch."""

from __future__ import annotations

import zipfile
from pathlib import Path

FAKE_VERSION = "1.0.7"  # a release no real index serves for this Python; below pip.conf's cap


def fake_torch_index(root: Path, version: str = FAKE_VERSION) -> str:
    """Write `<root>/simple/torch/` with a pure-Python `torch==version` wheel; its file:// URL."""
    folder = root / "simple" / "torch"
    folder.mkdir(parents=True)
    wheel = folder / f"torch-{version}-py3-none-any.whl"
    info = f"torch-{version}.dist-info"
    files = {
        "torch/__init__.py": f"__version__ = {version!r}\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: scrubbot-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr(f"{info}/RECORD", "".join(f"{name},,\n" for name in files) + f"{info}/RECORD,,\n")
    (folder / "index.html").write_text(f'<html><body><a href="{wheel.name}">{wheel.name}</a></body></html>\n')
    return (root / "simple").as_uri()
