"""No stage touches a checkout's files except through its one door (`engine.git.tree.Checkout`).

The scan reads every module of `app/pipelines/` and the engine modules that work on a checkout,
and fails on any file access that is not a `Checkout` call: `open()`, a `Path` method (a
`Checkout` method takes the repository-relative path as its first argument, a `Path` method
does not), or an `os` / `os.path` / `shutil` file function. The few accesses to the worker's
own files (its log archives, a selftest's hold file) are named below with the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE_MODULES = (
    "app/engine/fuzz/config.py", "app/engine/fuzz/placement.py", "app/engine/fuzz/treework.py",
    "app/engine/testgen/device_test.py", "app/engine/testgen/repro_test.py", "app/engine/testgen/stress.py",
    "app/engine/testgen/fuzz_body.py", "app/engine/git/codeowners.py",
)
# (module, the receiver) -> why it is not a checkout
OWN_FILES = {
    ("app/pipelines/ci_ingest/stages.py", "dest"): "the run's log archive under the data dir",
    ("app/pipelines/ci_ingest/stages.py", "dest.parent"): "the data dir's log folder",
    ("app/pipelines/ci_failure/improve.py", "dest.parent"): "the data dir's log folder",
    ("app/pipelines/selftest/stages.py", "Path(hold)"): "a selftest's hold file, named by the operator",
    ("app/pipelines/kit/stress.py", "scratch"): "the data dir's folder of scratch trees (a script's stress test)",
    ("app/pipelines/ci_ingest/stages.py", "partial"): "the log archive being downloaded, under the data dir",
    ("app/pipelines/ci_ingest/stages.py", "path"): "the run's log archive under the data dir",
    ("app/pipelines/ci_ingest/logstore.py", "folder"): "the data dir's log folder (eviction)",
    ("app/pipelines/ci_ingest/logstore.py", "path"): "a log archive under the data dir (eviction)",
    ("app/pipelines/kit/build.py", "Path(spec.origin).parent / 'version.py'"): "the worker's own torch's version.py",
    ("app/pipelines/kit/testcheck.py", "Path(root) / 'conftest.py'"): "a fresh temporary directory of its own",
    ("app/engine/fuzz/treework.py", "Path(host)"): "a build's compiled parts on the worker (the binds)",
}
PATH_ONLY = {"unlink", "mkdir", "rmdir", "touch", "rename", "iterdir", "glob", "rglob", "stat", "lstat", "open",
             "is_symlink", "chmod", "readlink", "symlink_to", "hardlink_to", "samefile", "owner", "resolve"}
# A Checkout method and how many positional arguments it takes at least (the path first).
CHECKOUT_ARGS = {"read_text": 1, "read_bytes": 1, "exists": 1, "is_file": 1, "is_dir": 1, "write_text": 2,
                 "write_bytes": 2}
OS_CALLS = {"open", "remove", "unlink", "mkdir", "makedirs", "rename", "replace", "listdir", "scandir", "walk",
            "fwalk", "stat", "lstat", "readlink", "symlink", "link", "chmod", "rmdir", "removedirs", "truncate"}
OS_PATH = {"exists", "isfile", "isdir", "islink", "lexists", "getsize", "realpath"}


def file_accesses(source: str) -> list[tuple[int, str, str]]:
    """(line, receiver, what) for each call that opens, lists or checks a file past the door."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "open":
            found.append((node.lineno, "", "open()"))
        elif isinstance(func, ast.Attribute):
            receiver = ast.unparse(func.value)
            if (receiver == "os" and func.attr in OS_CALLS) or (receiver == "os.path" and func.attr in OS_PATH) \
                    or receiver == "shutil":
                found.append((node.lineno, receiver, f"{receiver}.{func.attr}()"))
            elif func.attr in PATH_ONLY and receiver not in ("zipfile", "tarfile"):
                found.append((node.lineno, receiver, f"{receiver}.{func.attr}()"))
            elif func.attr in CHECKOUT_ARGS and len(node.args) < CHECKOUT_ARGS[func.attr]:
                found.append((node.lineno, receiver, f"{receiver}.{func.attr}() as a Path method"))
    return found


def _modules() -> list[str]:
    stages = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "app" / "pipelines").rglob("*.py"))
    return stages + list(ENGINE_MODULES)


@pytest.mark.parametrize("module", _modules())
def test_no_file_access_past_the_checkout_door(module):
    found = [f"{module}:{line}: {what}" for line, receiver, what in file_accesses((ROOT / module).read_text())
             if (module, receiver) not in OWN_FILES]
    assert not found, "open checkout files through `Checkout` (app/engine/git/tree.py):\n" + "\n".join(found)


def test_the_scan_finds_each_kind_of_access_it_forbids():
    source = """
from pathlib import Path
import os, shutil
def stage(worktree, checkout):
    (worktree / "t.py").write_text("x")
    Path(worktree, "t.py").read_text()
    (worktree / "t.py").exists()
    (worktree / "d").mkdir(parents=True)
    open(worktree / "t.py")
    os.path.isfile(str(worktree))
    shutil.copy("a", "b")
    checkout.write_text("t.py", "x")
    checkout.read_text("t.py")
    checkout.is_file("t.py")
"""
    whats = [what for _, _, what in file_accesses(source)]
    assert len(whats) == 7, whats  # the three Checkout calls pass
