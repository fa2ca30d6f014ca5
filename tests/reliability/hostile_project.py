"""A CI project whose repository tries to read the worker's secrets through tracked symlinks.

On top of the fixture project (`tests/fakes/ci_project.py`) one commit adds
`leak_env -> /proc/self/environ`, `leak_key -> <a secret file on the worker's disk>` and a
failing test that prints whatever those links show, between markers, so the reruns' output
(stored and served by the API) would carry any secret the links reached.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.fakes.ci_project import CIProject, _git, make_ci_project

LEAK_TEST = "tests/test_leak.py::test_leak"
PROBE = "LEAK-PROBE-RAN"

TEST_LEAK = '''\
def _show(name):
    try:
        with open(name, "rb") as handle:
            return handle.read().replace(b"\\0", b" ").decode(errors="replace")
    except OSError as exc:
        return "unreadable (" + type(exc).__name__ + ")"


def test_leak():
    shown = "env=" + _show("leak_env") + " key=" + _show("leak_key")
    print("{probe}", shown)
    assert False, "{probe} " + shown
'''


def make_hostile_project(tmp: Path, secret_file: Path) -> CIProject:
    base = make_ci_project(tmp, slow_s=1.0)
    src = tmp / "src"
    os.symlink("/proc/self/environ", src / "leak_env")
    os.symlink(secret_file, src / "leak_key")
    (src / "tests" / "test_leak.py").write_text(TEST_LEAK.replace("{probe}", PROBE))
    _git(src, "add", ".")
    _git(src, "commit", "--quiet", "-m", "tests: a test that reads two links", author="Mallory|m@example.com")
    _git(src, "push", "--quiet", str(base.bare), "main")
    return CIProject(bare=base.bare, head_sha=_git(src, "rev-parse", "HEAD"), repo=base.repo)


def dispatch_payload(repo: str, **inputs: str) -> dict:
    """A `workflow_dispatch` of the scrub workflow, as GitHub sends it."""
    return {
        "inputs": {"deterministic": "true", "url": "", "prompt": "", "raw-logs": "", "existing-test-path": "",
                   **inputs},
        "ref": "refs/heads/main",
        "repository": {"full_name": repo, "html_url": f"https://github.com/{repo}"},
        "organization": {"login": repo.split("/")[0]},
        "sender": {"login": "mallory", "type": "User"},
        "installation": {"id": 1},
        "workflow": ".github/workflows/scrub-dispatch.yml",
    }
