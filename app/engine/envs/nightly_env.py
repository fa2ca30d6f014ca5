"""A cached environment holding one torch wheel, and the binds that place its compiled parts.

`wheel_env(wheel_file, root, ...)`: `<root>/<version>+<variant>/`, a venv that sees the base
interpreter's packages (`--system-site-packages`: the test tools, pytest, expecttest, come from
there) with exactly this wheel installed in its own site-packages, which shadows any torch of
the base. Pinned: the file itself is installed (its name is its version); missing dependencies
come from `index_url` (a nightly index hosts them). Built in place, checked (the installed
`torch/version.py` must carry the wheel's `git_version`), marked complete last; reused after.
Keyed by version and variant: a CPU and a CUDA nightly of one day are two environments.

`compiled_binds(site_packages)`: what PyTorch's `tools/nightly.py` moves from an installed
wheel into a checkout's `torch/` so that the checkout's own Python runs: the extension
modules and shared libraries (`torch/*.so`, `torch/lib`), the generated `torch/version.py`
and `torch/testing/_internal/generated`, `torch/bin` and `torch/include`. `.pyi` stubs are
left out (typing only).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from app.engine.envs.once import made_once
from app.engine.envs.provision import ProvisionError, _stream
from app.engine.envs.variants import TorchBuild, installed_build

MARKER = "scrub-env.json"
PLACED = ("version.py", "lib", "bin", "include", "testing/_internal/generated")


def site_packages(env: Path) -> Path:
    found = sorted((Path(env) / "lib").glob("python3*/site-packages"))
    if not found:
        raise ProvisionError(f"{env} has no lib/python3*/site-packages")
    return found[0]


def env_dir(root: Path, build: TorchBuild) -> Path:
    version = build.version if "+" in build.version else f"{build.version}+{build.variant}"
    return Path(root) / version


def existing(root: Path, build: TorchBuild) -> Path | None:
    """The complete environment of `build`, if there is one."""
    path = env_dir(root, build)
    marker = path / MARKER
    if marker.is_file() and json.loads(marker.read_text()).get("git_version") == build.git_version:
        return path
    return None


def wheel_env(wheel_file: Path, build: TorchBuild, root: Path, *, index_url: str = "",
              base_python: str = sys.executable, on_line=lambda line: None) -> Path:
    """The environment with `wheel_file` installed (made once, then reused); its directory."""
    target = env_dir(root, build)

    def make() -> None:
        started = time.monotonic()
        python = str(target / "bin" / "python")
        index = ["--index-url", index_url] if index_url else []
        for command in ([base_python, "-m", "venv", "--without-pip", "--system-site-packages", str(target)],
                        [base_python, "-m", "pip", "--python", python, "install", "--no-input", "--progress-bar",
                         "off", "--disable-pip-version-check", *index, str(wheel_file)]):
            code, tail = _stream(command, on_line)
            if code != 0:
                raise ProvisionError(f"{' '.join(command[:4])} ... failed (exit {code}): " + "\n".join(tail[-8:]))
        installed = installed_build(site_packages(target))
        if installed is None or installed.git_version != build.git_version:
            raise ProvisionError(f"{wheel_file.name} did not install as torch {build.version} "
                                 f"({build.git_version[:12]}): found {installed}")
        subprocess.run([python, "-c", "import sys"], check=True, timeout=60, cwd="/")
        (target / MARKER).write_text(json.dumps({**build.to_dict(), "wheel": wheel_file.name,
                                                 "seconds": round(time.monotonic() - started, 1)}, indent=1))

    return made_once(target, lambda: existing(root, build) is not None, make)


def compiled_binds(site: Path) -> dict[str, str]:
    """Checkout-relative path -> host path of an installed torch's compiled and generated parts."""
    torch_dir = Path(site) / "torch"
    binds: dict[str, str] = {}
    for package in ("torch", "functorch"):
        for library in sorted((Path(site) / package).glob("*.so")):
            binds[f"{package}/{library.name}"] = str(library)
    for rel in PLACED:
        if (torch_dir / rel).exists():
            binds[f"torch/{rel}"] = str(torch_dir / rel)
    return binds
