"""The launch command of each mode, and the sized filesystems (/tmp, /dev/shm) in the real
sandbox of each mode."""

from __future__ import annotations

import os

import pytest

from app.engine.sandbox.policy import Limits, SandboxSpec, bwrap_launch
from tests.engine.sandbox.helpers import spec
from tests.engine.sandbox.modes import MODES, run_in_mode


def launch(uid: int | None, **options):
    built = bwrap_launch(SandboxSpec(**options), uid, {"repro.py": b""}, ["python", "repro.py"], 10,
                         bwrap="/usr/bin/bwrap", user_tasks=40)
    for fd in built.pass_fds:
        os.close(fd)
    return built.argv


def test_root_mode_drops_to_the_leased_uid_and_user_mode_counts_the_users_tasks():
    root, user = launch(420999), launch(None)
    drop = root.index("setpriv")
    assert root[drop:drop + 4] == ["setpriv", "--reuid=420999", "--regid=420999", "--clear-groups"]
    assert "--nproc=256" in root
    # User mode: no uid switch; its own user namespace mounts the bounded tmpfs (test_tmpfs.py).
    assert "setpriv" not in user and user[:3] == ["unshare", "--user", "--map-root-user"]
    assert "--nproc=296" in user  # the 40 tasks the user already has + the sandbox's 256
    for argv in (root, user):
        bwrap = argv.index("/usr/bin/bwrap")
        assert {"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent"} <= set(argv[bwrap:])


def test_dev_shm_and_tmp_are_sized_and_dev_is_read_only():
    argv = launch(None, limits=Limits(tmpfs_mb=100, shm_mb=30))
    mounting = argv[:argv.index("prlimit")]
    for dest, size in (("dev-shm", 30 << 20), ("tmp", 100 << 20)):
        point = next(i for i, arg in enumerate(mounting) if arg.endswith("/" + dest))
        assert mounting[point + 1] == str(size)
    bwrap = argv[argv.index("/usr/bin/bwrap"):]
    shm = bwrap.index("/dev/shm")
    assert bwrap[shm - 2] == "--bind" and bwrap[shm - 1].endswith("/dev-shm")
    assert bwrap[bwrap.index("--remount-ro"):bwrap.index("--remount-ro") + 2] == ["--remount-ro", "/dev"]
    assert bwrap.index("--remount-ro") < shm  # /dev/shm stays writable on the read-only /dev


def test_cpu_seconds_follow_the_cores_when_unpinned_and_the_threads_when_pinned():
    cores = os.cpu_count() or 1
    assert f"--cpu={10 * cores + 5}:{10 * cores + 10}" in launch(None)
    assert "--cpu=15:20" in launch(None, threads=1)


FILL = """
import errno
for path, mb in [("/dev/shm/fill", 40), ("/tmp/fill", 60)]:
    try:
        with open(path, "wb") as handle:
            for _ in range(mb):
                handle.write(b"x" * (1 << 20))
                handle.flush()
        print("WROTE", path)
    except OSError as exc:
        print("full:", path, errno.errorcode[exc.errno])
try:
    open("/dev/fill", "wb").write(b"x")
    print("WROTE /dev/fill")
except OSError as exc:
    print("denied: /dev", errno.errorcode[exc.errno])
open("/dev/null", "wb").write(b"still usable")
print("done")
"""


@pytest.mark.parametrize("mode", MODES)
def test_writing_past_dev_shm_or_tmp_fails_inside_the_sandbox(mode):
    result = run_in_mode(mode, FILL, spec(shm_mb=16, tmpfs_mb=32, fsize_mb=256), timeout_s=30)
    text = result.output.text()
    assert result.exit_code == 0, text
    assert "full: /dev/shm/fill ENOSPC" in text and "full: /tmp/fill ENOSPC" in text
    assert "denied: /dev EROFS" in text and "WROTE" not in text and "done" in text
