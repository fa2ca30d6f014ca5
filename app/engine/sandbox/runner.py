"""Run untrusted Python in a bubblewrap sandbox under rlimits, as root or as an ordinary user.

The launch chain, outermost first (every step `exec`s the next, so the Popen pid is bwrap's):

    [sh: join the sandbox's memory + pids cgroups, if writable]
    unshare --mount (root) | unshare --user --map-root-user --mount (user), then sh: mount
          /tmp, /dev/shm and $HOME as tmpfs bounded in bytes and files (`tmpfs.py`); root mode:
          bind-mount interpreter dirs a non-root uid cannot traverse
    setpriv --reuid U --regid U --clear-groups      (root: a leased host uid RLIMIT_NPROC counts)
    prlimit --as --cpu --nproc --fsize --nofile --core=0
    bwrap --unshare-all --unshare-user --disable-userns --die-with-parent --new-session
          [user: --uid/--gid the caller's own, --cap-drop ALL]
          read-only /usr /etc + interpreter, fresh /proc, read-only /dev, the bounded tmpfs
          /dev/shm, /tmp (cwd, holds the file) and $HOME bound in, read-only /, --clearenv +
          allow-listed env
    python /tmp/<file>

Mode (`userns.current_mode`): as root, a uid leased from a pool per sandbox; as an ordinary
user, the same bwrap command in a user namespace of its own (checked once: a host without
unprivileged user namespaces gets one `SandboxUnavailable` naming the fix).

No network (a new, empty network namespace), no host files beyond the read-only binds, no
secrets (the environment is rebuilt from an allow-list, and the launcher itself gets only
PATH). The sandbox's pid namespace dies with its init, so nothing a repro starts outlives the
run; a timeout SIGKILLs bwrap's process group and `--die-with-parent` takes the namespace
down. Afterwards (root mode) any process still owned by the leased uid is killed and counted.

`kind="none"` runs the interpreter directly (same environment and rlimits, no namespaces, no
uid switch) and is refused unless the caller declares the code trusted.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import IO

from app.engine.sandbox.capture import CapturedOutput, OutputBuffer, drain_until
from app.engine.sandbox.cgroups import sandbox_cgroups
from app.engine.sandbox.layer import TreeLayer
from app.engine.sandbox.policy import Limits, SandboxKind, SandboxSpec, bwrap_launch, plain_launch, sandbox_env
from app.engine.sandbox.uids import UidPool, kill_processes_of_uid, tasks_of_uid
from app.engine.sandbox.userns import SandboxMode, SandboxUnavailable, check_user_namespaces, current_mode

__all__ = ["Limits", "ProcessResult", "Sandbox", "SandboxError", "SandboxKind", "SandboxMode", "SandboxSpec",
           "SandboxUnavailable", "SpawnedProcess", "UntrustedCodeRefused", "run_sandboxed", "sandbox_env"]


class SandboxError(RuntimeError):
    """The sandbox itself failed to start (bwrap or the launcher), not the code in it."""


class UntrustedCodeRefused(PermissionError):
    """`kind="none"` was asked to run code that is not declared trusted."""


@dataclass(frozen=True)
class ProcessResult:
    """How a sandboxed process ended. `exit_code` follows the shell: 128+N when killed by N."""

    exit_code: int | None
    signal: int | None
    timed_out: bool
    duration_s: float
    output: CapturedOutput
    mode: str  # "cold": a fresh interpreter; "fork": a child of the fork server's zygote
    leftovers_killed: int = 0


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the launcher's process group; bwrap's --die-with-parent takes the sandbox down."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _exit_status(returncode: int | None) -> tuple[int | None, int | None]:
    """(exit code in shell convention, signal number) from a Popen return code."""
    if returncode is None:
        return None, None
    if returncode < 0:
        return 128 - returncode, -returncode
    if returncode > 128:
        return returncode, returncode - 128
    return returncode, None


_user_runs = itertools.count()


@lru_cache(maxsize=8)
def _uid_pool(state_dir: str) -> UidPool:
    return UidPool(Path(state_dir) / "uids")


class Sandbox:
    """Runs code per a `SandboxSpec`. Root mode leases a fresh uid per run (or per spawned
    process); user mode (not root) runs as the caller in a user namespace of bwrap's own."""

    def __init__(self, spec: SandboxSpec, uids: UidPool | None = None):
        self.spec = spec
        self.mode: SandboxMode = current_mode()  # never "user" as root: RLIMIT_NPROC would be void
        self._uids = uids

    @property
    def uids(self) -> UidPool:
        if self._uids is None:
            self._uids = _uid_pool(self.spec.state_dir)
        return self._uids

    def check_trust(self, trusted: bool) -> None:
        """Raise `UntrustedCodeRefused` for untrusted code without isolation, `SandboxUnavailable`
        when bwrap is missing or (user mode) cannot build a user namespace here."""
        if self.spec.kind == "none" and not trusted:
            raise UntrustedCodeRefused("sandbox kind 'none' is only for trusted code; use 'bwrap'")
        if self.spec.kind == "bwrap":
            bwrap = self._bwrap()
            if self.mode == "user":
                check_user_namespaces(bwrap)

    @staticmethod
    def _bwrap() -> str:
        found = shutil.which("bwrap")
        if found is None:
            raise SandboxUnavailable("bubblewrap (bwrap) is not installed: `sudo apt-get install bubblewrap` "
                                     "(or your distribution's package); trusted code may run with SCRUB_SANDBOX=none")
        return os.path.abspath(found)

    def run(self, source: str | None, *, timeout_s: float, trusted: bool = False, argv: Sequence[str] = (),
            filename: str = "repro.py", layer: TreeLayer | None = None) -> ProcessResult:
        """Run `source` as `python <filename> *argv` in a fresh sandbox; wait at most `timeout_s`.
        `source=None`: `python *argv`. `layer`: a checkout as the working directory."""
        buffer = OutputBuffer(self.spec.limits.head_bytes, self.spec.limits.tail_bytes)
        files = {} if source is None else {filename: source.encode()}
        # The file lands in /tmp; a layer's working directory (/tmp/work) is one level below it.
        script = filename if layer is None else os.path.relpath(f"/tmp/{filename}", layer.dest)
        command = [self.spec.python, *([] if source is None else [script]), *argv]
        started = time.monotonic()
        with self.spawn(files, command, trusted=trusted, timeout_s=timeout_s, layer=layer,
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as process:
            finished = drain_until(process.popen.stdout.fileno(), buffer, started + timeout_s)
            if not finished:
                _kill_group(process.popen)
                drain_until(process.popen.stdout.fileno(), buffer, time.monotonic() + 5)
            try:
                process.popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                _kill_group(process.popen)
                process.popen.wait()
        exit_code, signum = _exit_status(process.popen.returncode) if finished else (None, None)
        launcher_said = buffer.result().head[:200]
        if exit_code in (1, 125) and launcher_said.startswith((b"bwrap: ", b"scrub-sandbox: ", b"unshare: ")):
            raise SandboxError(launcher_said.decode("utf-8", "replace").strip())
        return ProcessResult(exit_code, signum, not finished, time.monotonic() - started,
                             buffer.result(), "cold", process.leftovers_killed)

    @contextmanager
    def spawn(self, files: Mapping[str, bytes], command: Sequence[str], *, trusted: bool = False,
              timeout_s: float | None = None, stdin: int | None = subprocess.DEVNULL,
              stdout: int | None = subprocess.PIPE, stderr: int | IO | None = subprocess.STDOUT,
              slots: int = 1, layer: TreeLayer | None = None) -> Iterator[SpawnedProcess]:
        """Start `command` in the sandbox with `files` in its working dir; kill all of it on exit.

        For long-lived processes (the fork server's zygote). The uid lease, if any, is held
        until the block ends; then the process group is killed and the uid's leftovers too.
        `slots`: how many runs share the sandbox at once (sizes the memory cgroup).
        """
        self.check_trust(trusted)
        with ExitStack() as stack:
            if self.spec.kind == "none":
                launch = plain_launch(self.spec, files, command, timeout_s, layer=layer)
                stack.callback(shutil.rmtree, launch.host_workdir, ignore_errors=True)
                uid = None
            else:
                limits = self.spec.limits
                total_mb = limits.total_memory_mb or (limits.memory_mb + limits.tmpfs_mb + limits.shm_mb) * max(1, slots)
                uid = stack.enter_context(self.uids.lease()) if self.mode == "root" else None
                name = str(uid) if uid is not None else f"user-{os.getpid()}-{next(_user_runs)}"
                procs = stack.enter_context(sandbox_cgroups(name, memory_bytes=total_mb << 20, pids=limits.nproc))
                user_tasks = tasks_of_uid(os.getuid()) if uid is None else 0
                launch = bwrap_launch(self.spec, uid, files, command, timeout_s, cgroup_procs=procs,
                                      bwrap=self._bwrap(), user_tasks=user_tasks, layer=layer)
            try:
                popen = subprocess.Popen(
                    launch.argv, stdin=stdin, stdout=stdout, stderr=stderr, pass_fds=launch.pass_fds,
                    cwd=launch.cwd, env=launch.env, start_new_session=True,
                )
            finally:
                for fd in launch.pass_fds:
                    os.close(fd)
            process = SpawnedProcess(popen, uid)
            try:
                yield process
            finally:
                _kill_group(popen)
                popen.wait()
                for stream in (popen.stdin, popen.stdout, popen.stderr):
                    if stream is not None:
                        stream.close()
                if uid is not None:
                    process.leftovers_killed = kill_processes_of_uid(uid, grace_s=1.0)


@dataclass
class SpawnedProcess:
    """A process started by `Sandbox.spawn`: the Popen, its uid (None unsandboxed), leftovers."""

    popen: subprocess.Popen
    uid: int | None
    leftovers_killed: int = 0


def run_sandboxed(source: str, spec: SandboxSpec, *, timeout_s: float, trusted: bool = False,
                  argv: Sequence[str] = (), filename: str = "repro.py") -> ProcessResult:
    """Run `source` once in a fresh sandbox (see `Sandbox.run`)."""
    return Sandbox(spec).run(source, timeout_s=timeout_s, trusted=trusted, argv=argv, filename=filename)
