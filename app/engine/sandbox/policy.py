"""What a sandbox is: limits, the environment a repro sees, and the launch command line.

`sandbox.py` runs what this module builds; see its docstring for the whole launch chain.
Nothing here starts a process.
"""

from __future__ import annotations

import glob
import math
import os
import re
import stat
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from app.engine.sandbox.environments import probe_interpreter
from app.engine.sandbox.gpu import driver_library_dirs
from app.engine.sandbox.layer import TreeLayer, layer_args, materialize
from app.engine.sandbox.tmpfs import prepare, sandbox_mounts

SandboxKind = Literal["bwrap", "none"]
WORKDIR = "/tmp"
HOME = "/home/sandbox"
LAUNCHER_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")
_FORBIDDEN_ENV_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE", "KEY")
_PLAIN_NAME = re.compile(r"[\w.-]{1,128}")
_FORBIDDEN_ENV_PREFIXES = ("SCRUB_", "GITHUB_", "GH_", "AWS_", "LD_")


@dataclass(frozen=True)
class Limits:
    """Per-run limits.

    `memory_mb`, `cpu_s`, `nproc`, `fsize_mb`, `nofile` are rlimits (per process; `cpu_s=None`
    derives CPU seconds from the timeout, x threads (x cores when unpinned), + 5 s). `nproc`
    counts tasks of the sandbox's host uid: as root a leased uid of its own; as an ordinary user
    the user's own uid, so the limit is set to the tasks the user already has + `nproc`.
    `tmpfs_mb` sizes /tmp, `shm_mb` /dev/shm (both tmpfs: writing past them is ENOSPC), and
    each tmpfs holds at most `tmpfs.FILES_PER_MB` files per MB of its size (`tmpfs_files`: /tmp's
    own bound instead); creating a file past it is ENOSPC too (`app.engine.sandbox.tmpfs`).
    `total_memory_mb` bounds the whole sandbox (processes + its tmpfs) through a memory cgroup
    where one can be created; None means `memory_mb + tmpfs_mb + shm_mb` per concurrent slot.
    """

    memory_mb: int = 4096
    cpu_s: int | None = None
    nproc: int = 256
    fsize_mb: int = 256
    nofile: int = 1024
    tmpfs_mb: int = 1024
    tmpfs_files: int | None = None
    shm_mb: int = 256
    total_memory_mb: int | None = None
    head_bytes: int = 64 * 1024
    tail_bytes: int = 64 * 1024


@dataclass(frozen=True)
class SandboxSpec:
    """How to run: sandbox kind, interpreter, limits, GPU access, threads, extra environment.

    `threads=None` (the default) leaves thread pools alone: OpenMP/MKL/OpenBLAS use the cores
    the sandbox sees, as on the reporter's machine (one thread hides fork-after-parallel-region
    hangs and races). `threads=N` pins them (`OMP_NUM_THREADS=N` ...): for the minimizer's many
    concurrent candidates only.

    `env` adds variables a repro may legitimately need (`TORCH_LOGS`, `PYTHONHASHSEED`); names
    that look like secrets (`SCRUB_*`, `*TOKEN*`, `*KEY*`, ...) or `LD_*` are refused.
    """

    kind: SandboxKind = "bwrap"
    python: str = sys.executable
    limits: Limits = Limits()
    gpu: bool = False
    threads: int | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    state_dir: str = "/run/scrub-sandbox"
    # Keep the host's network (the fix stage with SCRUB_FIX_NETWORK=true only); repros never.
    network: bool = False


def sandbox_env(spec: SandboxSpec) -> dict[str, str]:
    """The whole environment a repro sees: an allow-list, never the caller's environment."""
    python_bin = os.path.dirname(spec.python)
    env = {
        "PATH": f"{python_bin}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": HOME,
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "TMPDIR": WORKDIR,
        "PYTHONUNBUFFERED": "1",
        "PYTHONFAULTHANDLER": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    # A CPU run hides every GPU (an empty CUDA_VISIBLE_DEVICES). A GPU run sees what the worker
    # was given: its CUDA_VISIBLE_DEVICES when set, else no variable at all, since an empty
    # value would hide every GPU ("No CUDA GPUs are available", seen on the first GPU host).
    if not spec.gpu:
        env["CUDA_VISIBLE_DEVICES"] = ""
    elif "CUDA_VISIBLE_DEVICES" in os.environ:
        env["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
    if spec.gpu and (driver_dirs := driver_library_dirs()):
        env["LD_LIBRARY_PATH"] = ":".join(driver_dirs)  # the worker's, not the repro's (those are refused)
    if spec.threads is not None:
        env.update({name: str(spec.threads) for name in _THREAD_VARS})
    for name, value in spec.env.items():
        upper = name.upper()
        if upper.startswith(_FORBIDDEN_ENV_PREFIXES) or any(w in upper for w in _FORBIDDEN_ENV_WORDS):
            raise ValueError(f"environment variable {name!r} may not be passed into the sandbox")
        env[name] = value
    return env


def _prlimit_args(limits: Limits, timeout_s: float | None, threads: int | None, nproc: int,
                  gpu: bool = False) -> list[str]:
    # RLIMIT_AS bounds memory for CPU runs. A GPU run leaves it unlimited: the CUDA driver
    # reserves address space far beyond any memory it uses (unified addressing maps the GPUs'
    # memory into the process), so `cuInit` fails under a few-GiB limit. The sandbox's memory
    # cgroup (when one can be made) still bounds what a GPU run really uses.
    args = [
        f"--as={'unlimited' if gpu else limits.memory_mb << 20}",
        f"--nproc={nproc}",
        f"--fsize={limits.fsize_mb << 20}",
        f"--nofile={limits.nofile}",
        "--core=0",
    ]
    cpu = limits.cpu_s
    if cpu is None and timeout_s is not None:
        cpu = math.ceil(timeout_s * max(1, threads or os.cpu_count() or 1)) + 5
    if cpu is not None:
        args.append(f"--cpu={cpu}:{cpu + 5}")  # SIGXCPU first, SIGKILL 5 s later
    return ["prlimit", *args, "--"]


def _deepest_closed(path: str) -> str | None:
    """The deepest directory from / down to `path` that others cannot traverse, or None."""
    current = Path(path)
    for part in (current, *current.parents):
        try:
            if not os.stat(part).st_mode & stat.S_IXOTH:
                return str(part)
        except OSError:
            return str(part)
    return None


_SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")  # bound, or linked as the host links them


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for top in _SYSTEM_DIRS:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


# What the CUDA driver and NVML read besides /dev/nvidia*: PCI topology and device attributes
# (`/sys/bus/pci/devices/*` link into `/sys/devices`), CPU and NUMA layout, the driver module's
# parameters. Read-only; /proc/driver/nvidia comes with the sandbox's own /proc.
GPU_SYS_PATHS = ("/sys/devices", "/sys/bus", "/sys/class", "/sys/module")


def _gpu_binds() -> list[str]:
    args: list[str] = []
    for node in sorted(glob.glob("/dev/nvidia*")):
        args += ["--dev-bind", node, node]
    for path in GPU_SYS_PATHS:
        if os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in driver_library_dirs():  # in a system directory it is visible already; elsewhere bind it
        if not any(path == top or path.startswith(top + "/") for top in ("/usr", "/etc", *_SYSTEM_DIRS)):
            args += ["--ro-bind", path, path]
    return args


@dataclass
class Launch:
    """A command line ready for Popen: argv, fds to pass, cwd, environment, a dir to clean."""

    argv: list[str]
    pass_fds: tuple[int, ...]
    cwd: str | None
    env: dict[str, str]
    host_workdir: str | None = None


# Runs first: join the sandbox's cgroups, then exec the rest (`tmpfs.prepare`'s namespace, in
# which the tmpfs mounts and, root mode, the staged interpreter dirs are mounted).
_JOIN_CGROUPS = (
    'while [ "$1" != -- ]; do echo $$ > "$1" || { echo "scrub-sandbox: cannot join cgroup $1" >&2; exit 125; }; '
    'shift; done; shift; exec "$@"'
)


def check_file_names(files: Mapping[str, bytes]) -> None:
    """File names are plain names in the working directory: no paths, no `..`."""
    for name in files:
        if not _PLAIN_NAME.fullmatch(name) or name in (".", ".."):
            raise ValueError(f"file name {name!r} must be a plain name (letters, digits, '.', '_', '-')")


def bwrap_launch(spec: SandboxSpec, uid: int | None, files: Mapping[str, bytes], command: Sequence[str],
                 timeout_s: float | None, cgroup_procs: Sequence[str] = (), bwrap: str = "bwrap",
                 user_tasks: int = 0, layer: TreeLayer | None = None) -> Launch:
    """The launch chain of `runner.py`'s docstring for `command`, with `files` in /tmp.

    `uid`: root mode, drop to this leased host uid. None: user mode, the caller is an ordinary
    user and bwrap builds the sandbox in a user namespace of its own; RLIMIT_NPROC then counts
    the caller's own tasks, so it is `user_tasks` (what the caller runs now) + `limits.nproc`.
    `layer`: a checkout bound at `layer.dest` (`app.engine.sandbox.layer`), the working directory.
    """
    check_file_names(files)
    interpreter = probe_interpreter(spec.python)
    stage_root = Path(spec.state_dir) / "stage"
    staged: list[tuple[str, str]] = []  # (host path, traversable mount point)

    def stage(path: str, *, whole: bool = False) -> str:
        """Where the leased uid finds `path`: itself, or (root mode, behind a directory it cannot
        traverse) a mount point the launcher binds a directory on the way to it to first: the
        one just below the deepest closed directory, so one staging serves a whole subtree.
        `whole`: the uid must also traverse `path` itself (a directory whose entries it reads)."""
        if uid is None:
            return path
        for host, mount_point in staged:
            if path == host or path.startswith(host.rstrip("/") + "/"):
                return mount_point + path[len(host):]
        closed = _deepest_closed(path if whole else (os.path.dirname(path) or "/"))
        if closed is None:
            return path
        top = path if closed == path else path[:len(closed.rstrip("/")) + 1] + \
            path[len(closed.rstrip("/")) + 1:].split("/", 1)[0]
        # A directory and a file need different mount points (two launches share the names).
        mount_point = str(stage_root / f"{'' if os.path.isdir(top) else 'f'}{len(staged)}")
        staged.append((top, mount_point))
        return mount_point + path[len(top):]

    binds: list[str] = []
    for path in interpreter.paths:
        binds += ["--ro-bind", stage(path, whole=True), path]
    fds: list[int] = []
    tree_args: list[str] = []
    if layer is not None:
        tree_args, fds = layer_args(layer, source=stage)
    file_args: list[str] = []
    for name, content in files.items():
        fd = os.memfd_create(f"scrub-{name}", 0)
        os.write(fd, content)
        os.lseek(fd, 0, os.SEEK_SET)
        fds.append(fd)
        file_args += ["--file", str(fd), f"{WORKDIR}/{name}"]
    env_args: list[str] = []
    for name, value in sandbox_env(spec).items():
        env_args += ["--setenv", name, value]
    limits = spec.limits
    mounts = sandbox_mounts(WORKDIR, limits.tmpfs_mb, limits.tmpfs_files, limits.shm_mb, HOME)
    mounted = prepare(mounts, uid, spec.state_dir)
    argv = [
        bwrap, "--unshare-all", *(["--share-net"] if spec.network else []), "--unshare-user", "--disable-userns",
        *mounted.bwrap_ids, "--die-with-parent", "--new-session",
        *_system_binds(), "--proc", "/proc", "--dev", "/dev",
        *(_gpu_binds() if spec.gpu else []),
        # /dev read-only (its nodes stay usable); /dev/shm, /tmp and $HOME tmpfs sized in bytes
        # and in files: no unbounded writable filesystem anywhere.
        "--remount-ro", "/dev", *mounted.binds,
        # After the tmpfs mounts, so an interpreter in a venv under $HOME or /tmp stays visible
        # (read-only) instead of being hidden by the empty HOME or the private /tmp.
        *binds,
        *tree_args, *file_args, "--remount-ro", "/", "--chdir", layer.dest if layer else WORKDIR,
        "--clearenv", *env_args, "--", *command,
    ]
    if uid is None:
        argv = _prlimit_args(limits, timeout_s, spec.threads, user_tasks + limits.nproc, spec.gpu) + argv
    else:
        drop = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
        argv = drop + _prlimit_args(limits, timeout_s, spec.threads, limits.nproc, spec.gpu) + argv
    for host, mount_point in staged:
        if os.path.isdir(host):
            os.makedirs(mount_point, mode=0o755, exist_ok=True)
        else:  # a file (a placed binary) is bound onto a file
            os.makedirs(os.path.dirname(mount_point), mode=0o755, exist_ok=True)
            open(mount_point, "a").close()
    argv = [*mounted.prefix(staged), *argv]
    if cgroup_procs:
        argv = ["/bin/sh", "-c", _JOIN_CGROUPS, "sh", *cgroup_procs, "--", *argv]
    return Launch(argv, tuple(fds), None, dict(LAUNCHER_ENV))


def plain_launch(spec: SandboxSpec, files: Mapping[str, bytes], command: Sequence[str],
                 timeout_s: float | None, layer: TreeLayer | None = None) -> Launch:
    """Trusted mode: the same environment and rlimits, a host temp dir as cwd, no isolation
    (a `layer` is materialized as a copy there: trusted code may write anywhere in it)."""
    check_file_names(files)
    workdir = tempfile.mkdtemp(prefix="scrub-trusted-")
    os.makedirs(os.path.join(workdir, "home"))
    for name, content in files.items():
        Path(workdir, name).write_bytes(content)
    cwd = workdir
    if layer is not None:
        cwd = os.path.join(workdir, "work")
        materialize(layer, Path(cwd))
    env = sandbox_env(spec) | {"HOME": os.path.join(workdir, "home"), "TMPDIR": workdir}
    argv = _prlimit_args(spec.limits, timeout_s, spec.threads, spec.limits.nproc, spec.gpu) + list(command)
    return Launch(argv, (), cwd, env, host_workdir=workdir)
