"""Can this host run untrusted code? Asked once when a command starts, so a missing
bubblewrap (or a kernel that forbids its user namespaces) is said at once, with the fix, instead
of surfacing later as every run failing.

`scrub serve` starts anyway (the status page is useful without a sandbox) but starts no worker
and tells `/healthz`; `scrub worker` refuses to start (a worker without a sandbox takes no run);
`scrub demo` and `scrub repro` stop before running anything.
"""

from __future__ import annotations

from app.settings import Settings

INSTALL_BWRAP = ("bubblewrap (bwrap) is not installed: `sudo apt-get install bubblewrap` on Debian and Ubuntu "
                 "(`sudo dnf install bubblewrap` on Fedora); every repro runs inside it")


def sandbox_problem(settings: Settings) -> str | None:
    """None when untrusted code can run here; else one sentence naming the fix."""
    import shutil

    from app.engine.sandbox.runner import Sandbox, SandboxSpec, SandboxUnavailable

    if settings.resolved_sandbox == "none":
        return ("SCRUB_SANDBOX=none: untrusted code never runs without the sandbox, so no run can start; "
                "unset SCRUB_SANDBOX to use bubblewrap")
    if shutil.which("bwrap") is None:
        return INSTALL_BWRAP
    try:
        Sandbox(SandboxSpec(kind="bwrap")).check_trust(trusted=False)
    except SandboxUnavailable as error:
        return str(error)
    return None
