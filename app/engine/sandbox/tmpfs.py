"""The sandbox's writable filesystems: tmpfs mounts bounded in bytes AND in files (inodes).

bwrap's `--tmpfs` (0.8) takes a `--size` but no inode bound, and a tmpfs without `nr_inodes`
allows half the host's RAM pages in files: 300,000 empty files cost ~300 MB of kernel memory
that no byte limit sees (nothing bounds it in user mode, where there may be no memory cgroup).
So the launcher mounts /tmp, /dev/shm and $HOME itself, with `size=` and `nr_inodes=`, in a
mount namespace of its own, and bwrap binds them in (`--bind`); creating a file past the bound
is ENOSPC, as writing past the size is.

- root mode: `unshare --mount` (the launcher is still root there), the mounts owned by the
  leased uid, on fixed mount points under the state dir (each launch has its own namespace).
- user mode: `unshare --user --map-root-user --mount`: the caller is root of a user namespace
  of its own, which may mount a tmpfs; bwrap then builds the sandbox inside it as before, with
  the caller's own uid and gid inside (`--uid/--gid`) and every capability dropped. The mount
  points are in a private directory of the process (`mkdtemp`, made once, removed at exit).

The namespace, and so the mounts, go away with the sandbox's last process.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

FILES_PER_MB = 128  # one inode per 8 KiB of a tmpfs's size, unless a limit says otherwise
HOME_MB = 64

# $1 the uid owning the mounts ("" for the caller); triples (dir size_bytes files) until --;
# staged (host path, mount point) pairs until -- (root mode); then the command.
MOUNT_SCRIPT = (
    'owner=$1; shift; '
    'while [ "$1" != -- ]; do mount -t tmpfs -o "size=$2,nr_inodes=$3,mode=0755,nosuid,nodev$owner" '
    'scrub-sandbox "$1" || { echo "scrub-sandbox: cannot mount a tmpfs on $1" >&2; exit 125; }; '
    'shift 3; done; shift; '
    'while [ "$1" != -- ]; do mount --bind "$1" "$2" && mount -o remount,bind,ro "$2" '
    '|| { echo "scrub-sandbox: cannot stage $1" >&2; exit 125; }; shift 2; done; shift; '
    'exec "$@"'
)


@dataclass(frozen=True)
class Mount:
    """One tmpfs of the sandbox: where it is inside, its size and how many files it may hold."""

    dest: str
    size_mb: int
    files: int


def files_for(size_mb: int) -> int:
    return max(1, size_mb * FILES_PER_MB)


def sandbox_mounts(tmp: str, tmp_mb: int, tmp_files: int | None, shm_mb: int, home: str) -> list[Mount]:
    """/dev/shm, /tmp and $HOME, in the order bwrap binds them."""
    return [Mount("/dev/shm", shm_mb, files_for(shm_mb)),
            Mount(tmp, tmp_mb, tmp_files if tmp_files is not None else files_for(tmp_mb)),
            Mount(home, HOME_MB, files_for(HOME_MB))]


@dataclass
class Mounted:
    """The launcher's part: bwrap's `--bind` arguments, and the prefix that mounts them."""

    mounts: list[Mount]
    points: list[str]  # host mount points, one per mount
    unshare: list[str]
    owner: str  # mount options naming the owner (root mode: the leased uid)
    bwrap_ids: list[str]  # user mode: --uid/--gid/--cap-drop for the bwrap inside the user namespace

    @property
    def binds(self) -> list[str]:
        return [item for m, p in zip(self.mounts, self.points) for item in ("--bind", p, m.dest)]

    def prefix(self, staged: Sequence[tuple[str, str]] = ()) -> list[str]:
        """unshare ... sh -c MOUNT_SCRIPT ...: mounts, then the `staged` (host path, mount
        point) binds of root mode, then execs the command that follows."""
        triples = [item for m, p in zip(self.mounts, self.points) for item in (p, str(m.size_mb << 20), str(m.files))]
        pairs = [item for pair in staged for item in pair]
        return [*self.unshare, "/bin/sh", "-c", MOUNT_SCRIPT, "sh", self.owner, *triples, "--", *pairs, "--"]


def _name(dest: str) -> str:
    return dest.strip("/").replace("/", "-")


def prepare(mounts: Sequence[Mount], uid: int | None, state_dir: str) -> Mounted:
    """Mount points for `mounts` (`uid` None: user mode, a fresh directory)."""
    if uid is not None:
        base = os.path.join(state_dir, "tmpfs")
        unshare = ["unshare", "--mount", "--propagation", "private", "--"]
        owner, ids = f",uid={uid},gid={uid}", []
    else:
        base = user_base()
        unshare = ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private", "--"]
        owner = ""
        ids = ["--uid", str(os.getuid()), "--gid", str(os.getgid()), "--cap-drop", "ALL"]
    points = [os.path.join(base, _name(m.dest)) for m in mounts]
    for point in points:
        os.makedirs(point, mode=0o755, exist_ok=True)
    return Mounted(list(mounts), points, unshare, owner, ids)


_user_bases: dict[int, str] = {}  # pid -> this process's directory of mount points


def user_base() -> str:
    """User mode's mount points live here: a private directory of this process (every launch
    mounts on the same empty directories, each in its own namespace), made again if removed."""
    base = _user_bases.get(os.getpid())
    if base is None or not os.path.isdir(base) or os.lstat(base).st_uid != os.getuid():
        base = tempfile.mkdtemp(prefix="scrub-tmpfs-")
        _user_bases[os.getpid()] = base
        atexit.register(_remove, base, os.getpid())
    return base


def _remove(base: str, pid: int) -> None:
    if os.getpid() == pid:  # not in a forked child that inherited the hook
        shutil.rmtree(base, ignore_errors=True)
