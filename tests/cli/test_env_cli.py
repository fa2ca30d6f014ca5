"""`scrub env add|list|rm`: releases provisioned under the data dir become environments."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

from typer.testing import CliRunner

from app.cli.main import app
from app.settings import get_settings, reset_settings_cache
from tests.engine.envs.fake_release import FAKE_VERSION, fake_torch_index
from tests.engine.sandbox.helpers import needs_bwrap

runner = CliRunner()


def test_add_list_use_and_remove_a_release(tmp_path, monkeypatch):
    monkeypatch.setenv("SCRUB_TORCH_INDEX_URL", fake_torch_index(tmp_path / "index"))
    monkeypatch.setenv("SCRUB_ENV_INSTALLER", "pip")
    reset_settings_cache()
    added = runner.invoke(app, ["env", "add", FAKE_VERSION, "--json"])
    assert added.exit_code == 0, added.output
    env = json.loads(added.stdout)["environments"][0]
    data_dir = get_settings().data_dir
    assert env["python"] == str((data_dir / "envs" / f"{FAKE_VERSION}+cpu" / "bin" / "python").absolute())
    assert env["torch"] == FAKE_VERSION and env["complete"] is True

    listed = json.loads(runner.invoke(app, ["env", "list", "--json"]).stdout)
    assert listed["source"] == "provisioned"
    assert list(listed["environments"])[0] == FAKE_VERSION  # oldest first, then this interpreter
    assert sys.executable in listed["environments"].values()
    assert get_settings().environment_map[FAKE_VERSION] == env["python"]

    again = runner.invoke(app, ["env", "add", FAKE_VERSION])
    assert again.exit_code == 0 and "already provisioned" in again.stderr

    removed = runner.invoke(app, ["env", "rm", FAKE_VERSION])
    assert removed.exit_code == 0 and "removed" in removed.stderr
    assert FAKE_VERSION not in get_settings().environment_map
    assert runner.invoke(app, ["env", "rm", FAKE_VERSION]).exit_code == 2


def test_scrub_environments_wins_over_provisioned_releases(tmp_path, monkeypatch):
    store = get_settings().env_store
    path = store.path("2.14.1")
    (path / "bin").mkdir(parents=True)
    (path / "bin" / "python").write_text("")
    store.mark_complete(path, {"torch": "2.14.1"})
    assert "2.14.1" in get_settings().environment_map
    monkeypatch.setenv("SCRUB_ENVIRONMENTS", f"mine={sys.executable}")
    reset_settings_cache()
    assert get_settings().environment_map == {"mine": sys.executable}
    listed = json.loads(runner.invoke(app, ["env", "list", "--json"]).stdout)
    assert listed["source"] == "SCRUB_ENVIRONMENTS" and listed["provisioned"][0]["version"] == "2.14.1"


def test_bad_versions_and_failed_installs_are_input_errors(tmp_path, monkeypatch):
    assert "give one like 2.14.1" in runner.invoke(app, ["env", "add", "2.14"]).stderr
    monkeypatch.setenv("SCRUB_TORCH_INDEX_URL", fake_torch_index(tmp_path / "index"))
    monkeypatch.setenv("SCRUB_ENV_INSTALLER", "pip")
    reset_settings_cache()
    missing = runner.invoke(app, ["env", "add", "1.0.9"])
    assert missing.exit_code == 2 and "could not provision torch 1.0.9" in missing.stderr
    assert "Traceback" not in missing.output


def test_bisect_names_a_missing_release_and_how_to_get_it(tmp_path):
    repro = tmp_path / "repro.py"
    repro.write_text("print('ok')\n")
    result = runner.invoke(app, ["bisect", str(repro), "--envs", "2.12.0,2.14.1"])
    assert result.exit_code == 2 and "scrub env add 2.12.0" in result.stderr


@needs_bwrap
def test_bisect_provision_fetches_a_missing_release_then_bisects_across_it(tmp_path, monkeypatch):
    data = Path(tempfile.mkdtemp(prefix="scrub-env-cli-", dir="/var/tmp"))  # the sandbox hides /tmp
    try:
        monkeypatch.setenv("SCRUB_DATA_DIR", str(data))
        monkeypatch.setenv("SCRUB_TORCH_INDEX_URL", fake_torch_index(tmp_path / "index"))
        monkeypatch.setenv("SCRUB_ENV_INSTALLER", "pip")
        monkeypatch.setenv("SCRUB_SANDBOX", "bwrap")
        reset_settings_cache()
        here = version("torch").split("+")[0]
        repro = tmp_path / "repro.py"
        repro.write_text("import torch\nassert not torch.__version__.startswith('1.'), torch.__version__\n")
        # The newer side is this interpreter, named by its bare release: with nothing provisioned
        # yet, --provision must still see that release as here, not install a second full torch.
        envs = f"{FAKE_VERSION},{here}"
        result = runner.invoke(app, ["bisect", str(repro), "--envs", envs, "--provision", "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["summary"] == f"fixed in {here} (still fails in {FAKE_VERSION})"
        assert f"provisioning torch=={FAKE_VERSION}" in result.stderr
        assert f"provisioning torch=={here}" not in result.stderr  # only the missing release is fetched
    finally:
        shutil.rmtree(data, ignore_errors=True)


def test_this_interpreters_release_is_nameable_before_anything_is_provisioned(monkeypatch):
    here = version("torch").split("+")[0]
    settings = get_settings()
    assert settings.environment_map == {"local": sys.executable}  # nothing provisioned
    assert settings.nameable_environments == {"local": sys.executable, here: sys.executable}
    monkeypatch.setenv("SCRUB_ENVIRONMENTS", f"mine={sys.executable}")
    reset_settings_cache()
    assert get_settings().nameable_environments == {"mine": sys.executable}  # configured: only that
