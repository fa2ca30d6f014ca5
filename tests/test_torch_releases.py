"""The directory of provisioned releases: versions, listing, incomplete installs, merging."""

from __future__ import annotations

import pytest

from app.torch_releases import EnvStore, merge_interpreters, parse_version, version_key


def _fake_env(store: EnvStore, version: str, complete: bool = True) -> None:
    path = store.path(version)
    (path / "bin").mkdir(parents=True)
    (path / "bin" / "python").write_text("")
    if complete:
        store.mark_complete(path, {"torch": version, "installer": "pip"})


def test_only_full_releases_are_versions():
    assert parse_version(" 2.14.1 ") == "2.14.1" and parse_version("torch==2.13.0") == "2.13.0"
    for bad in ("2.14", "latest", "2.14.1; rm -rf /", "../2.14.1", ""):
        with pytest.raises(ValueError, match="give one like 2.14.1"):
            parse_version(bad)


def test_versions_sort_numerically_and_drop_build_tags():
    assert sorted(["2.9.0", "2.13.0+cpu", "2.10.1"], key=version_key) == ["2.9.0", "2.10.1", "2.13.0+cpu"]


def test_listing_keeps_incomplete_installs_apart(tmp_path):
    store = EnvStore(tmp_path / "envs")
    assert store.list() == [] and store.interpreters() == {}
    _fake_env(store, "2.14.1")
    _fake_env(store, "2.9.0")
    _fake_env(store, "2.12.0", complete=False)
    assert [(env.version, env.complete) for env in store.list()] == [("2.9.0", True), ("2.12.0", False), ("2.14.1", True)]
    assert list(store.interpreters()) == ["2.9.0", "2.14.1"]
    assert store.remove("2.9.0") and not store.remove("2.9.0")
    assert list(store.interpreters()) == ["2.14.1"]


def test_this_interpreter_joins_under_its_release_unless_provisioned():
    provisioned = {"2.12.0": "/e/2.12.0/bin/python", "2.14.1": "/e/2.14.1/bin/python"}
    assert merge_interpreters({}, "/usr/bin/python3", "2.13.0+cpu") == {"local": "/usr/bin/python3"}
    assert merge_interpreters(provisioned, "/usr/bin/python3", "2.13.0+cpu") == {
        "2.12.0": "/e/2.12.0/bin/python", "2.13.0": "/usr/bin/python3", "2.14.1": "/e/2.14.1/bin/python"}
    assert merge_interpreters(provisioned, "/usr/bin/python3", "2.14.1")["2.14.1"] == "/e/2.14.1/bin/python"
    assert merge_interpreters(provisioned, "/usr/bin/python3", None) == provisioned


def test_environments_are_keyed_by_variant_and_a_gpu_worker_sees_no_cpu_build(tmp_path):
    cpu_store = EnvStore(tmp_path / "envs")
    for variant in ("cpu", "cu126"):
        path = cpu_store.path("2.14.1", variant)
        (path / "bin").mkdir(parents=True)
        (path / "bin" / "python").write_text("")
        cpu_store.mark_complete(path, {"torch": f"2.14.1+{variant}"})
    legacy = tmp_path / "envs" / "2.13.0"  # the version-only layout: its installed version.py decides
    (legacy / "bin").mkdir(parents=True)
    (legacy / "bin" / "python").write_text("")
    site = legacy / "lib" / "python3.11" / "site-packages" / "torch"
    site.mkdir(parents=True)
    (site / "version.py").write_text("__version__ = '2.13.0'\ncuda: Optional[str] = '12.8'\ngit_version = 'abc'\n")
    cpu_store.mark_complete(legacy, {"torch": "2.13.0"})
    assert cpu_store.builds() == {"2.13.0+cu128": str(legacy / "bin" / "python"),
                                  "2.14.1+cpu": str(tmp_path / "envs" / "2.14.1+cpu" / "bin" / "python"),
                                  "2.14.1+cu126": str(tmp_path / "envs" / "2.14.1+cu126" / "bin" / "python")}
    assert cpu_store.get("2.14.1").variant == "cpu"  # a CPU worker prefers its own builds
    gpu_store = EnvStore(tmp_path / "envs", gpu=True)
    assert sorted(gpu_store.builds()) == ["2.13.0+cu128", "2.14.1+cu126"]
    assert gpu_store.interpreters()["2.14.1"].endswith("2.14.1+cu126/bin/python")
