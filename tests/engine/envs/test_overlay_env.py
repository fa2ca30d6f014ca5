"""A commit's build over a nightly's environment: the commit's Python laid over hard links."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app.engine.envs.nightly_env import site_packages
from app.engine.envs.overlay_env import overlay_env
from app.engine.envs.provision import ProvisionError


@pytest.fixture
def base(tmp_path) -> Path:
    env = tmp_path / "nightly"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(env)], check=True)
    torch = site_packages(env) / "torch"
    torch.mkdir()
    (torch / "__init__.py").write_text("from torch.ops import scale\nfrom torch import extra\n")
    (torch / "ops.py").write_text("def scale(x):\n    return 2 * x\n")
    (torch / "extra.py").write_text("")
    (torch / "lib").mkdir()
    (torch / "lib" / "libtorch.so").write_bytes(b"\x7fELF compiled part")
    subprocess.run([str(env / "bin" / "python"), "-c", "import torch"], check=True, cwd="/")  # leaves __pycache__
    return env


def scale_of(env: Path) -> str:
    done = subprocess.run([str(env / "bin" / "python"), "-c", "import torch; print(torch.scale(1))"],
                          capture_output=True, text=True, cwd="/")
    return done.stdout.strip() or done.stderr.strip().splitlines()[-1]


def test_the_commit_s_python_runs_over_the_nightly_s_compiled_parts(base, tmp_path):
    env = overlay_env(base, {"torch/ops.py": "def scale(x):\n    return 3 * x\n", "torch/new.py": "N = 1\n"},
                      tmp_path / "commits", "c0ffee")
    assert scale_of(env) == "3"
    assert scale_of(base) == "2"  # the nightly itself is untouched (a link is replaced, not written through)
    lib, base_lib = site_packages(env) / "torch/lib/libtorch.so", site_packages(base) / "torch/lib/libtorch.so"
    assert lib.stat().st_ino == base_lib.stat().st_ino  # hard-linked, not copied
    assert (site_packages(env) / "torch/new.py").read_text() == "N = 1\n"


def test_a_file_the_commit_deleted_is_gone(base, tmp_path):
    env = overlay_env(base, {"torch/extra.py": None}, tmp_path / "commits", "deleted")
    assert "ImportError" in scale_of(env) or "ModuleNotFoundError" in scale_of(env)


def test_made_once_then_reused(base, tmp_path):
    first = overlay_env(base, {"torch/ops.py": "def scale(x):\n    return 4 * x\n"}, tmp_path / "c", "k")
    again = overlay_env(base, {"torch/ops.py": "def scale(x):\n    return 5 * x\n"}, tmp_path / "c", "k")
    assert first == again and scale_of(again) == "4"


def test_a_path_outside_site_packages_is_refused(base, tmp_path):
    with pytest.raises(ProvisionError, match="relative path"):
        overlay_env(base, {"../../evil.py": "x = 1\n"}, tmp_path / "c", "evil")
