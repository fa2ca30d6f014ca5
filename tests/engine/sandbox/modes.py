"""Run the real sandbox in either mode from a test: `root` (uid pool) or `user` (an ordinary user).

As root, user mode is reached by running `user_driver.py` as a fresh unprivileged uid
(`setpriv --reuid --regid --clear-groups`). The interpreter lives under /root (0700) here, as on
many machines; the wrapper shows it to that uid the way a user's own interpreter is visible
to them: in a private mount namespace, a 0755 tmpfs over the closed directory with the
interpreter's directories bound back read-only. Nothing else of /root is visible.

Which modes must work is `SCRUB_TEST_SANDBOX_MODES` (default: every mode this process can
reach). A mode that is claimed but missing fails with CI=true and is skipped otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from app.engine.sandbox.capture import CapturedOutput
from app.engine.sandbox.environments import minimal_cover, probe_interpreter
from app.engine.sandbox.runner import ProcessResult, Sandbox, SandboxSpec

MODES = ("root", "user")
DRIVER = Path(__file__).with_name("user_driver.py")
REPO = Path(__file__).resolve().parents[3]
TEST_USER_UID = 440_000 + os.getpid() % 5000  # no account; distinct per pytest process


def unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: a claimed sandbox mode must run)")
    pytest.skip(reason)


def claimed_modes() -> tuple[str, ...]:
    raw = os.environ.get("SCRUB_TEST_SANDBOX_MODES", "")
    if raw.strip():
        return tuple(m.strip() for m in raw.split(",") if m.strip())
    return MODES if os.geteuid() == 0 else ("user",)


def require_mode(mode: str) -> None:
    """Skip a mode nobody claimed; fail (CI) or skip a claimed mode this host cannot run."""
    if mode not in claimed_modes():
        pytest.skip(f"sandbox mode {mode!r} not claimed (SCRUB_TEST_SANDBOX_MODES)")
    if shutil.which("bwrap") is None:
        unavailable("bubblewrap (bwrap) is not installed")
    if mode == "root" and (os.geteuid() != 0 or shutil.which("setpriv") is None):
        unavailable("root mode needs root and setpriv")
    if mode == "user" and os.geteuid() == 0 and shutil.which("setpriv") is None:
        unavailable("user mode as root needs setpriv to become an ordinary user")


def _closed_ancestor(path: str) -> str | None:
    """The outermost directory above `path` that others cannot traverse, if any."""
    for part in reversed(Path(path).parents):
        if str(part) != "/" and not os.stat(part).st_mode & stat.S_IXOTH:
            return str(part)
    return None


_EXPOSE = (
    # $1 stage dir; the closed dirs until --; the dirs to show until --; the command.
    'stage=$1; shift; set -e; closed=; '
    'while [ "$1" != -- ]; do closed="$closed $1"; shift; done; shift; '
    'i=0; for d in "$@"; do [ "$d" = -- ] && break; mkdir -p "$stage/$i"; mount --bind "$d" "$stage/$i"; i=$((i+1)); done; '
    'for c in $closed; do mount -t tmpfs -o mode=0755 scrub-test "$c"; done; i=0; '
    'while [ "$1" != -- ]; do mkdir -p "$1"; mount --bind "$stage/$i" "$1"; mount -o remount,bind,ro "$1"; '
    'i=$((i+1)); shift; done; shift; exec "$@"'
)


def as_user_argv(command: Sequence[str], stage: str, uid: int = TEST_USER_UID) -> list[str]:
    """`command` as an ordinary user (uid, no groups), with this interpreter and the repository
    visible to it. `stage`: an empty directory the wrapper may mount on (its own namespace)."""
    drop = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--", *command]
    wanted = minimal_cover([*probe_interpreter(sys.executable).paths, str(REPO)])
    hidden = [path for path in wanted if _closed_ancestor(path)]
    if not hidden:
        return drop
    closed = sorted({_closed_ancestor(path) for path in hidden})
    return ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", _EXPOSE, "sh",
            stage, *closed, "--", *hidden, "--", *drop]


def user_home(uid: int = TEST_USER_UID) -> str:
    """A directory the test user owns (HOME, data dir), outside pytest's root-only tmp."""
    home = tempfile.mkdtemp(prefix="scrub-test-user-")
    os.chown(home, uid, uid)
    return home


def user_env(home: str, **extra: str) -> dict[str, str]:
    """A small environment for the test user, plus this process's `SCRUB_*`/`GITHUB_*` variables
    (a test that plants secrets must see them reach the sandbox's caller)."""
    # Not the data dir or the config file of this (root) process: the user has its own home,
    # and an empty XDG_CONFIG_HOME there stands for "no config file", as on a fresh account.
    own = ("SCRUB_DATA_DIR", "SCRUB_CONFIG")
    planted = {k: v for k, v in os.environ.items() if k.startswith(("SCRUB_", "GITHUB_")) and k not in own}
    return {**planted, "PATH": f"{os.path.dirname(sys.executable)}:/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8", "HOME": home, "XDG_CONFIG_HOME": os.path.join(home, ".config"),
            "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1", **extra}


_JOIN = 'while [ "$1" != -- ]; do echo $$ > "$1"; shift; done; shift; exec "$@"'


def run_in_mode(mode: str, source: str, spec: SandboxSpec, *, timeout_s: float,
                argv: Sequence[str] = (), join_cgroups: Sequence[str] = ()) -> ProcessResult:
    """One cold run of `source` through the real sandbox, in `mode`. `join_cgroups`: (user mode
    as root) `cgroup.procs` files the user's process starts in, as if delegated to it."""
    require_mode(mode)
    if mode == "root" or os.geteuid() != 0:
        box = Sandbox(spec)
        assert box.mode == mode
        return box.run(source, timeout_s=timeout_s, argv=argv)
    request = {"source": source, "timeout_s": timeout_s, "argv": list(argv),
               "limits": spec.limits.__dict__, "threads": spec.threads}
    home, stage = user_home(), tempfile.mkdtemp(prefix="scrub-test-stage-")
    try:
        command = as_user_argv([sys.executable, str(DRIVER)], stage)
        if join_cgroups:
            command = ["/bin/sh", "-c", _JOIN, "sh", *join_cgroups, "--", *command]
        done = subprocess.run(command, input=json.dumps(request),
                              capture_output=True, text=True, env=user_env(home), cwd="/",
                              timeout=timeout_s + 120)
    finally:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(stage, ignore_errors=True)
    assert done.returncode == 0, f"user-mode driver failed: {done.stderr[-3000:]}"
    reply = json.loads(done.stdout.strip().splitlines()[-1])
    assert reply["mode"] == "user"
    output = CapturedOutput(bytes.fromhex(reply["head"]), bytes.fromhex(reply["tail"]), reply["total_bytes"])
    return ProcessResult(reply["exit_code"], reply["signal"], reply["timed_out"], reply["duration_s"],
                         output, "cold", reply["leftovers_killed"])


def main(command: Sequence[str]) -> int:
    """`python -m tests.engine.sandbox.modes CMD...`: CMD as the unprivileged test user, in the
    repository, with CI and SCRUB_TEST_* passed on and only user mode claimed (.ci/run as root)."""
    if os.geteuid() != 0:
        return subprocess.call(list(command))
    home, stage = user_home(), tempfile.mkdtemp(prefix="scrub-test-stage-")
    passed = {k: v for k, v in os.environ.items() if k == "CI" or k.startswith("SCRUB_TEST_")}
    env = {**user_env(home), **passed, "SCRUB_TEST_SANDBOX_MODES": "user", "TMPDIR": home}
    try:
        return subprocess.call(as_user_argv(list(command), stage), env=env, cwd=REPO)
    finally:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(stage, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
