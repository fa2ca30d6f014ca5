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


# A fuzz project (tests/fakes/fuzz_project.py) whose repository aims the fuzz job's own file
# access (as the worker, outside the sandbox) at the worker's disk through tracked links.

EVIL_MARK = "SCRUB_INJECTED_CODE"
HOST_MODULE = "HOST_SETTING = 'worker-owned-file-0b1c'\n"
# A fuzzer that accepts any extra words (what a newline in `fuzz.command` turns into).
LENIENT_FUZZER_FLAG = "parser.parse_args().seed"


def make_hostile_fuzz_project(tmp: Path, *, links: dict[str, Path], scrub_yml: str) -> "FuzzProject":
    """The tlib fuzz project with `links` (tracked path -> a directory on the worker's disk) and
    its own `.github/scrub.yml`; its fuzzer ignores unknown words."""
    from tests.fakes.fuzz_project import FuzzProject, make_fuzz_project

    base = make_fuzz_project(tmp)
    src = tmp / "src"
    fuzzer = src / "tools" / "fuzz.py"
    fuzzer.write_text(fuzzer.read_text().replace(LENIENT_FUZZER_FLAG, "parser.parse_known_args()[0].seed"))
    for rel, target in links.items():
        path = src / rel
        if path.is_dir():
            _git(src, "rm", "-r", "--quiet", "--cached", rel)
            for child in sorted(path.rglob("*"), reverse=True):
                child.rmdir() if child.is_dir() else child.unlink()
            path.rmdir()
        os.symlink(target, path)
    (src / ".github" / "scrub.yml").write_text(scrub_yml)
    _git(src, "add", "-A", ".")
    _git(src, "commit", "--quiet", "-m", "links and a scrub.yml", author="Mallory|m@example.com")
    _git(src, "push", "--quiet", str(base.bare), "main")
    return FuzzProject(bare=base.bare, head_sha=_git(src, "rev-parse", "HEAD"))
