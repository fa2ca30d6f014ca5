"""cgroup v1 and v2 chosen at runtime, on fake cgroupfs trees (plain directories laid out as the
kernel lays them out), and v1 for real on this host when it is writable (root)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from app.engine.sandbox import cgroups
from app.engine.sandbox.cgroups import is_v2, sandbox_cgroups, v2_parent_dir
from tests.engine.sandbox.helpers import needs_root_mode, spec
from tests.engine.sandbox.modes import TEST_USER_UID, run_in_mode


def fake_v2(tmp_path: Path, own: str, delegated: str = "cpu memory pids") -> tuple[Path, Path]:
    root = tmp_path / "cgroup"
    (root / own.lstrip("/")).mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpu io memory pids\n")
    (root / "cgroup.subtree_control").write_text("cpu memory pids\n")
    parent = (root / own.lstrip("/")).parent
    (parent / "cgroup.subtree_control").write_text(delegated + "\n")
    self_cgroup = tmp_path / "self-cgroup"
    self_cgroup.write_text(f"0::{own}\n")
    return root, self_cgroup


def fake_v1(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "cgroup"
    for controller in ("memory", "pids"):
        (root / controller / "worker").mkdir(parents=True)
    self_cgroup = tmp_path / "self-cgroup"
    self_cgroup.write_text("9:pids:/worker\n4:memory:/worker\n1:cpu:/\n0::/\n")
    return root, self_cgroup


@pytest.fixture(autouse=True)
def _fresh_log_memory(monkeypatch):
    monkeypatch.setattr(cgroups, "_said", set())


def test_v2_groups_go_beside_the_workers_group_with_memory_max_and_pids_max(tmp_path):
    root, self_cgroup = fake_v2(tmp_path, "/system.slice/scrub-worker.service")
    assert is_v2(root) and v2_parent_dir(root, self_cgroup) == root / "system.slice"
    with sandbox_cgroups("420001", memory_bytes=300 << 20, pids=64, root=root, self_cgroup=self_cgroup) as procs:
        group = root / "system.slice" / "scrub-sandbox" / "420001"
        assert procs == [str(group / "cgroup.procs")]  # one hierarchy: one file to join
        assert (group / "memory.max").read_text() == str(300 << 20)
        assert (group / "pids.max").read_text() == "64"
        assert not (group / "memory.limit_in_bytes").exists()
        assert (group.parent / "cgroup.subtree_control").read_text() == "+memory +pids"


def test_v2_in_the_root_group_uses_the_root(tmp_path):
    root, self_cgroup = fake_v2(tmp_path, "/")
    assert v2_parent_dir(root, self_cgroup) == root


def test_v2_without_delegated_controllers_means_rlimits_only_said_once(tmp_path, caplog):
    root, self_cgroup = fake_v2(tmp_path, "/user.slice/session-1.scope", delegated="cpu")
    with caplog.at_level(logging.INFO, logger="app.engine.sandbox.cgroups"):
        for name in ("a", "b"):
            with sandbox_cgroups(name, memory_bytes=1 << 30, pids=64, root=root, self_cgroup=self_cgroup) as procs:
                assert procs == []
    assert caplog.text.count("rlimits only") == 1
    assert not (root / "user.slice" / "scrub-sandbox").exists()


def test_v1_groups_go_under_the_workers_own_group_in_each_hierarchy(tmp_path):
    root, self_cgroup = fake_v1(tmp_path)
    assert not is_v2(root)
    with sandbox_cgroups("u-7", memory_bytes=1 << 30, pids=32, root=root, self_cgroup=self_cgroup) as procs:
        memory = root / "memory" / "worker" / "scrub-sandbox" / "u-7"
        pids = root / "pids" / "worker" / "scrub-sandbox" / "u-7"
        assert procs == [str(memory / "cgroup.procs"), str(pids / "cgroup.procs")]
        assert (memory / "memory.limit_in_bytes").read_text() == str(1 << 30)
        assert (pids / "pids.max").read_text() == "32"


def test_real_v1_groups_are_made_and_removed_on_this_host():
    if is_v2() or cgroups.own_cgroup_dir("memory") is None:
        pytest.skip("no writable cgroup v1 memory hierarchy here")
    name = f"scrub-test-{os.getpid()}"
    with sandbox_cgroups(name, memory_bytes=64 << 20, pids=16) as procs:
        assert procs and all(Path(p).is_file() for p in procs)
        memory = next(Path(p).parent for p in procs if "/memory/" in p)
        assert int((memory / "memory.limit_in_bytes").read_text()) == 64 << 20
    assert not any(Path(p).parent.exists() for p in procs)


FORK_AND_ALLOCATE = """
import os
children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        block = bytearray(150 * 1024 * 1024)
        for i in range(0, len(block), 4096):
            block[i] = 1
        os._exit(0)
    children.append(pid)
print("statuses", sorted(os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in children))
"""


@needs_root_mode
def test_forked_allocations_are_bounded_by_the_memory_cgroup():
    if cgroups.v2_parent_dir() is None if is_v2() else cgroups.own_cgroup_dir("memory") is None:
        pytest.skip("no writable memory cgroup here (v1 or v2)")
    result = run_in_mode("root", FORK_AND_ALLOCATE, spec(memory_mb=1024, total_memory_mb=300), timeout_s=60)
    text = result.output.text()
    assert "statuses" in text and "-9" in text  # at least one child OOM-killed inside the group


@needs_root_mode
def test_user_mode_uses_a_delegated_cgroup_for_the_whole_sandboxs_memory():
    """An ordinary user whose cgroup is delegated to them (here: v1 groups chowned to the test
    uid, which the user's process starts in) gets the memory cgroup too, not rlimits only."""
    bases = [cgroups.own_cgroup_dir(c) for c in ("memory", "pids")]
    if is_v2() or None in bases:
        pytest.skip("no writable cgroup v1 memory and pids hierarchies here")
    delegated = [base / f"scrub-test-delegated-{os.getpid()}" for base in bases]
    for group in delegated:
        group.mkdir()
        for path in (group, group / "cgroup.procs", group / "tasks"):
            os.chown(path, TEST_USER_UID, TEST_USER_UID)
    try:
        result = run_in_mode("user", FORK_AND_ALLOCATE, spec(memory_mb=1024, total_memory_mb=300), timeout_s=60,
                             join_cgroups=[str(group / "cgroup.procs") for group in delegated])
    finally:
        for group in delegated:
            group.rmdir()
    text = result.output.text()
    assert "statuses" in text and "-9" in text, text  # a child OOM-killed inside the sandbox's group
