"""Which sandbox mode this process can use, and a clear message when it can use none.

Two modes build the same sandbox (namespaces, mounts, rlimits, sized tmpfs, timeouts):

- `root`: the worker is root. Each sandbox runs as a host uid leased from a pool (`uids.py`),
  so RLIMIT_NPROC and "kill every leftover process of the uid" are exact.
- `user`: the worker is an ordinary user (a laptop, a GitHub-hosted runner step). bwrap builds
  the sandbox in a user namespace of its own; no uid switch, no pool, no root-owned state.
  This needs unprivileged user namespaces, which some hosts turn off: Ubuntu 23.10+ through
  AppArmor (`kernel.apparmor_restrict_unprivileged_userns=1`), `user.max_user_namespaces=0`,
  Debian's old `kernel.unprivileged_userns_clone=0`, Docker's default seccomp profile.
  `check_user_namespaces` tries the launch chain once (`unshare --user` to mount the bounded
  tmpfs, then bwrap: `tmpfs.py`) and turns its failure into one message that names the fix
  (`SandboxUnavailable`).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Literal

from app.engine.sandbox.tmpfs import Mount, prepare

SandboxMode = Literal["root", "user"]
SYSCTL_DIR = Path("/proc/sys")
_PROBE_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
_works: set[str] = set()  # bwrap paths that built a user-mode sandbox in this process


class SandboxUnavailable(RuntimeError):
    """This host cannot build the sandbox for this user; the message says how to fix it."""


def current_mode() -> SandboxMode:
    """`root` when this process may switch uids (euid 0), else `user`."""
    return "root" if os.geteuid() == 0 else "user"


def _sysctl(name: str, sysctl_dir: Path) -> str | None:
    try:
        return (sysctl_dir / name.replace(".", "/")).read_text().strip()
    except OSError:
        return None


def explain_failure(bwrap_said: str, sysctl_dir: Path = SYSCTL_DIR) -> str:
    """One paragraph: what failed (bwrap's own words) and the fixes that apply to this host."""
    fixes = []
    if _sysctl("kernel.apparmor_restrict_unprivileged_userns", sysctl_dir) == "1":
        fixes.append("AppArmor restricts unprivileged user namespaces (Ubuntu 23.10 and later): "
                     "`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`, or give bwrap "
                     "an AppArmor profile that allows `userns`")
    if _sysctl("user.max_user_namespaces", sysctl_dir) == "0":
        fixes.append("user namespaces are switched off: `sudo sysctl -w user.max_user_namespaces=10000`")
    if _sysctl("kernel.unprivileged_userns_clone", sysctl_dir) == "0":
        fixes.append("unprivileged user namespaces are switched off: "
                     "`sudo sysctl -w kernel.unprivileged_userns_clone=1`")
    if not fixes:
        fixes.append("inside a container, its seccomp or AppArmor profile forbids them: start it with "
                     "`--security-opt seccomp=unconfined --security-opt apparmor=unconfined`; on a host, "
                     "check `kernel.apparmor_restrict_unprivileged_userns` (must be 0) and "
                     "`user.max_user_namespaces` (must be > 0)")
    said = " ".join(bwrap_said.split())[:300] or "no message"
    return ("the sandbox cannot start as an ordinary user: it could not build its user "
            f"namespace ({said}). Fix: {'; or '.join(fixes)}. Running the worker as root works "
            "too (it leases a sandbox uid per run instead). See docs/sandbox.md, Troubleshooting.")


def check_user_namespaces(bwrap: str, sysctl_dir: Path = SYSCTL_DIR) -> None:
    """Build an empty sandbox with the user mode's namespaces once; `SandboxUnavailable` if not.

    Success is remembered for the process; a failure is checked again next time, so fixing
    the host needs no restart.
    """
    if bwrap in _works:
        return
    mounted = prepare([Mount("/tmp", 1, 16)], None, "")  # the launch chain's user namespace and tmpfs
    argv = [*mounted.prefix(), bwrap, "--unshare-all", "--unshare-user", "--disable-userns", *mounted.bwrap_ids,
            "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", *mounted.binds,
            "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, env=_PROBE_ENV,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(explain_failure(str(exc), sysctl_dir)) from None
    if done.returncode != 0:
        raise SandboxUnavailable(explain_failure(done.stderr or done.stdout, sysctl_dir))
    _works.add(bwrap)
