"""Provisioning runs the real installer (a venv and pip) against a local index."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app.engine.envs import EnvStore, ProvisionError, provision
from app.engine.envs.provision import install_commands
from tests.engine.envs.fake_release import FAKE_VERSION, fake_torch_index


def test_every_plan_pins_torch_and_passes_the_index(tmp_path):
    for installer in ("pip", "uv"):
        commands = install_commands("2.14.1", tmp_path / "2.14.1", installer=installer, base_python=sys.executable,
                                    index_url="https://download.pytorch.org/whl/cpu")
        install = commands[-1]
        assert install[-1] == "torch==2.14.1" and "torch" not in install[:-1]
        assert install[install.index("--index-url") + 1] == "https://download.pytorch.org/whl/cpu"
    plain = install_commands("2.14.1", tmp_path / "x", installer="pip", base_python=sys.executable)
    assert "--index-url" not in plain[-1]
    with pytest.raises(ValueError):
        install_commands("2.14", tmp_path / "x", installer="pip", base_python=sys.executable)


def test_provision_installs_the_pinned_release_and_reuses_it(tmp_path):
    store = EnvStore(tmp_path / "envs")
    index = fake_torch_index(tmp_path / "index")
    lines: list[str] = []
    env = provision(FAKE_VERSION, store, installer="pip", index_url=index, on_line=lines.append)
    assert env.complete and env.info["torch"] == FAKE_VERSION and env.info["installer"] == "pip"
    assert any("Successfully installed torch" in line for line in lines)
    version = subprocess.run([str(env.python), "-c", "import torch; print(torch.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert version == FAKE_VERSION
    again = provision(FAKE_VERSION, store, installer="pip", index_url=index, on_line=lines.append)
    assert again.path == env.path and again.info == env.info  # cached: not rebuilt


def test_a_release_the_index_lacks_fails_clearly_and_leaves_nothing_usable(tmp_path):
    store = EnvStore(tmp_path / "envs")
    index = fake_torch_index(tmp_path / "index")
    with pytest.raises(ProvisionError, match="failed"):
        provision("1.0.8", store, installer="pip", index_url=index)
    assert store.interpreters() == {}
    # built under a hidden name and moved into place only once complete: nothing half-made is listed
    assert store.list() == [] and store.get("1.0.8") is None
