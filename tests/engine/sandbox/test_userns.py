"""An ordinary user gets the sandbox (user mode), or one clear error naming the fix, never a
traceback. The failure is simulated with a fake bwrap on PATH that fails the way bwrap does
on Ubuntu 24.04 (AppArmor), and with fake sysctl files for the diagnosis."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from app.engine.sandbox.userns import SandboxUnavailable, check_user_namespaces, explain_failure
from tests.engine.sandbox.modes import REPO, TEST_USER_UID, as_user_argv, require_mode, user_env

APPARMOR_SAYS = "bwrap: setting up uid map: Permission denied"
FAKE_BWRAP = f"#!/bin/sh\necho '{APPARMOR_SAYS}' >&2\nexit 1\n"


def sysctls(tmp_path: Path, **values: str) -> Path:
    for name, value in values.items():
        path = tmp_path / name.replace(".", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")
    return tmp_path


@pytest.mark.parametrize(("settings", "fix"), [
    ({"kernel.apparmor_restrict_unprivileged_userns": "1", "user.max_user_namespaces": "63000"},
     "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"),
    ({"kernel.apparmor_restrict_unprivileged_userns": "0", "user.max_user_namespaces": "0"},
     "sudo sysctl -w user.max_user_namespaces="),
    ({"kernel.unprivileged_userns_clone": "0", "user.max_user_namespaces": "63000"},
     "sudo sysctl -w kernel.unprivileged_userns_clone=1"),
    ({"user.max_user_namespaces": "63000"}, "--security-opt seccomp=unconfined"),
])
def test_the_message_names_the_fix_for_this_host(tmp_path, settings, fix):
    message = explain_failure(APPARMOR_SAYS, sysctls(tmp_path, **settings))
    assert fix in message and APPARMOR_SAYS in message
    others = {"sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0", "sudo sysctl -w user.max_user_namespaces=",
              "sudo sysctl -w kernel.unprivileged_userns_clone=1", "--security-opt seccomp=unconfined"} - {fix}
    assert not any(other in message for other in others)
    assert "\n" not in message and "Traceback" not in message


def test_a_bwrap_that_cannot_build_the_namespace_is_one_clear_error(tmp_path):
    fake = tmp_path / "bwrap"
    fake.write_text(FAKE_BWRAP)
    fake.chmod(0o755)
    with pytest.raises(SandboxUnavailable) as caught:
        check_user_namespaces(str(fake), sysctls(tmp_path / "sys", **{"kernel.apparmor_restrict_unprivileged_userns": "1"}))
    assert APPARMOR_SAYS in str(caught.value)
    assert "kernel.apparmor_restrict_unprivileged_userns=0" in str(caught.value)


def test_the_real_bwrap_builds_the_user_mode_namespaces_here():
    require_mode("user")  # a missing bwrap fails under CI=true (skips locally)
    check_user_namespaces(shutil.which("bwrap"))  # raises if this host cannot


def run_cli_as_user(args: list[str], home: str, path_prefix: str = "") -> subprocess.CompletedProcess:
    """`scrub ARGS` as an ordinary user: this process when not root, else a fresh uid."""
    env = user_env(home, SCRUB_DATA_DIR=os.path.join(home, "data"))
    if path_prefix:
        env["PATH"] = f"{path_prefix}:{env['PATH']}"
    command = [sys.executable, "-m", "app.cli.main", *args]
    stage = tempfile.mkdtemp(prefix="scrub-test-stage-")
    try:
        argv = as_user_argv(command, stage) if os.geteuid() == 0 else command
        return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=home, timeout=300)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


@pytest.fixture
def home():
    directory = tempfile.mkdtemp(prefix="scrub-test-user-")
    if os.geteuid() == 0:
        os.chown(directory, TEST_USER_UID, TEST_USER_UID)
    (Path(directory) / "repro.py").write_text("print('before')\nraise ValueError('boom 7')\n")
    if os.geteuid() == 0:
        os.chown(Path(directory) / "repro.py", TEST_USER_UID, TEST_USER_UID)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def test_scrub_repro_as_an_ordinary_user_runs_in_the_sandbox(home):
    require_mode("user")
    done = run_cli_as_user(["repro", "repro.py", "--json"], home)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    data = json.loads(done.stdout)
    assert data["outcome"] == "error" and data["exception"] == "ValueError", data
    assert "boom 7" in data["message"]


def test_without_user_namespaces_repro_and_minimize_say_how_to_fix_it(home):
    require_mode("user")
    fake_bin = Path(home) / "bin"
    fake_bin.mkdir()
    (fake_bin / "bwrap").write_text(FAKE_BWRAP)
    (fake_bin / "bwrap").chmod(0o755)
    for args in (["repro", "repro.py"], ["minimize", "repro.py", "--jobs", "1"]):
        done = run_cli_as_user(args, home, path_prefix=str(fake_bin))
        assert done.returncode == 2, (args, done.stdout, done.stderr[-3000:])
        assert "Traceback" not in done.stderr and "PermissionError" not in done.stderr, done.stderr[-3000:]
        said = " ".join(done.stderr.split())
        assert "could not build its user namespace" in said and APPARMOR_SAYS in said
        assert "Fix:" in said and "docs/sandbox.md" in said
    assert REPO.is_dir()
