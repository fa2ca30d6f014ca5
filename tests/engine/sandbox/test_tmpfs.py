"""The sandbox's tmpfs mounts bound files (inodes) as well as bytes, in both modes."""

from __future__ import annotations

import os
import stat

import pytest

from app.engine.sandbox.policy import HOME, Limits, SandboxSpec, bwrap_launch
from app.engine.sandbox.tmpfs import (
    FILES_PER_MB,
    HOME_MB,
    files_for,
    prepare,
    sandbox_mounts,
    user_base,
)
from tests.engine.sandbox.helpers import spec
from tests.engine.sandbox.modes import MODES, run_in_mode


def test_each_mount_gets_files_in_proportion_to_its_size_unless_tmp_has_its_own_bound():
    shm, tmp, home = sandbox_mounts("/tmp", 100, None, 30, HOME)
    assert (shm.dest, shm.size_mb, shm.files) == ("/dev/shm", 30, 30 * FILES_PER_MB)
    assert (tmp.dest, tmp.files) == ("/tmp", 100 * FILES_PER_MB)
    assert (home.dest, home.size_mb, home.files) == (HOME, HOME_MB, files_for(HOME_MB))
    assert sandbox_mounts("/tmp", 100, 500, 30, HOME)[1].files == 500


def test_root_mode_mounts_as_root_for_the_leased_uid_and_user_mode_in_a_user_namespace(tmp_path):
    mounts = sandbox_mounts("/tmp", 8, 64, 1, HOME)
    root = prepare(mounts, 420999, str(tmp_path))
    assert root.unshare[:2] == ["unshare", "--mount"] and root.owner == ",uid=420999,gid=420999"
    assert root.bwrap_ids == [] and all(p.startswith(str(tmp_path)) for p in root.points)
    prefix = root.prefix([("/host/a", "/stage/0")])
    tmp = prefix.index(root.points[1])
    assert prefix[tmp:tmp + 3] == [root.points[1], str(8 << 20), "64"]
    assert prefix[-4:] == ["--", "/host/a", "/stage/0", "--"]
    assert root.binds[3:6] == ["--bind", root.points[1], "/tmp"]
    user = prepare(mounts, None, str(tmp_path))
    assert user.unshare[:3] == ["unshare", "--user", "--map-root-user"] and user.owner == ""
    assert user.bwrap_ids == ["--uid", str(os.getuid()), "--gid", str(os.getgid()), "--cap-drop", "ALL"]
    base = user_base()
    assert all(p.startswith(base + "/") and os.path.isdir(p) for p in user.points)
    assert stat.S_IMODE(os.lstat(base).st_mode) == 0o700 and os.lstat(base).st_uid == os.getuid()
    assert prepare(mounts, None, str(tmp_path)).points == user.points  # one directory per process


def test_bwrap_binds_the_bounded_mounts_instead_of_making_its_own():
    built = bwrap_launch(SandboxSpec(limits=Limits(tmpfs_files=64)), 420999, {"repro.py": b""},
                         ["python", "repro.py"], 10, bwrap="/usr/bin/bwrap")
    for fd in built.pass_fds:
        os.close(fd)
    bwrap = built.argv[built.argv.index("/usr/bin/bwrap"):]
    assert "--tmpfs" not in bwrap and "--size" not in bwrap
    assert [bwrap[i + 2] for i, arg in enumerate(bwrap) if arg == "--bind"][:3] == ["/dev/shm", "/tmp", HOME]
    assert "nr_inodes=$3" in " ".join(built.argv[:built.argv.index("/usr/bin/bwrap")])


FILL_FILES = """
import errno, os, sys
for top, wanted in [("/tmp", 200), ("/dev/shm", 200), (os.environ["HOME"], int(sys.argv[1]))]:
    made = 0
    try:
        for i in range(wanted):
            open(os.path.join(top, "f%d" % i), "w").close()
            made += 1
        print("MADE ALL", top, made)
    except OSError as exc:
        print("full:", top, errno.errorcode[exc.errno], made)
"""


@pytest.mark.parametrize("mode", MODES)
def test_creating_more_files_than_the_bound_fails_inside_the_sandbox(mode):
    home_files = files_for(HOME_MB)
    result = run_in_mode(mode, FILL_FILES, spec(tmpfs_mb=32, tmpfs_files=64, shm_mb=1), timeout_s=60,
                         argv=[str(home_files + 10)])
    text = result.output.text()
    assert result.exit_code == 0, text
    assert "MADE ALL" not in text, text
    made = {line.split()[1]: int(line.split()[3]) for line in text.splitlines() if line.startswith("full:")}
    assert all(f"full: {top} ENOSPC" in text for top in ("/tmp", "/dev/shm", HOME)), text
    # The bound counts every inode of the mount: its root, and /tmp's repro.py.
    assert 0 < made["/tmp"] < 64 and 0 < made["/dev/shm"] < files_for(1) and 0 < made[HOME] < home_files, made
