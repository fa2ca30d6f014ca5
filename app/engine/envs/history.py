"""What the history between a build's commit and the commit under test says (the mirror's view).

All of it reads commits and trees only, so it works on the blobless mirror:

- `release_tag(mirror, commit)`: `v2.13.0` when a release tag points at the commit;
- `source_commit(mirror, git_version)`: the main-branch commit a nightly was built from. A
  PyTorch nightly's `git_version` is a commit of the `nightly` branch whose subject names it
  (`2025-09-01 nightly release (0123abcd...)`), as `tools/nightly.py` reads it; any other
  `git_version` is its own source;
- `distance(mirror, ancestor, commit)`: commits from `ancestor` to `commit`, None when it is
  not an ancestor;
- `changed_paths(mirror, base, commit)` and `classify(paths)`: which changes a Python overlay
  carries and which need a build (C++/CUDA sources, codegen inputs, the build system).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from app.engine.git.repo import git, is_ancestor

_RELEASE_TAG = re.compile(r"^v(\d+\.\d+\.\d+)$")
_SHA1 = re.compile(r"\b([0-9a-f]{40})\b")
# Paths whose change means the compiled library differs: sources, codegen inputs, build files.
COMPILED_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".cu", ".cuh", ".mm", ".m", ".metal", ".S",
                     ".cmake", ".bzl", ".bazel", ".yaml", ".in")
COMPILED_DIRS = ("aten/", "c10/", "caffe2/", "torch/csrc/", "third_party/", "cmake/", "torchgen/",
                 "tools/autograd/", "tools/jit/", "tools/setup_helpers/", "tools/codegen/")
COMPILED_FILES = ("CMakeLists.txt", "setup.py", "pyproject.toml", "version.txt", "BUILD.bazel", "build.bzl")
# Python that ships in the wheel and that an overlay therefore replaces.
PYTHON_PACKAGES = ("torch/", "functorch/", "torchgen/")


def release_tag(mirror: Path, commit: str) -> str | None:
    """The release (`2.13.0`) whose tag `vX.Y.Z` points at `commit`, or None."""
    out = git("tag", "--points-at", commit, cwd=mirror, check=False)
    releases = [m.group(1) for m in map(_RELEASE_TAG.match, out.split()) if m]
    return max(releases, key=lambda v: tuple(map(int, v.split("."))), default=None)


def source_commit(mirror: Path, git_version: str) -> str | None:
    """The commit a build's `git_version` stands for in the mirror (None: not in the mirror)."""
    if not re.fullmatch(r"[0-9a-f]{7,40}", git_version or ""):
        return None
    subject = git("log", "-1", "--format=%s", git_version, "--", cwd=mirror, check=False).strip()
    if not subject:
        return None
    named = _SHA1.search(subject) if "nightly" in subject.lower() else None
    target = named.group(1) if named else git_version
    full = git("rev-parse", "--verify", "--quiet", f"{target}^{{commit}}", cwd=mirror, check=False).strip()
    return full or None


def distance(mirror: Path, ancestor: str, commit: str) -> int | None:
    """How many commits `commit` is ahead of `ancestor`; None when `ancestor` is not one."""
    if not is_ancestor(mirror, ancestor, commit):
        return None
    return int(git("rev-list", "--count", f"{ancestor}..{commit}", cwd=mirror).strip() or 0)


def changed_paths(mirror: Path, base: str, commit: str) -> list[str]:
    """Paths that differ between `base` and `commit` (trees only: no file contents needed)."""
    out = git("diff", "--name-only", "--no-renames", "-z", base, commit, cwd=mirror)
    return sorted(p for p in out.split("\0") if p)


@dataclass(frozen=True)
class Changes:
    python: tuple[str, ...] = ()  # shipped Python: the overlay replaces these
    compiled: tuple[str, ...] = ()  # needs a build
    other: tuple[str, ...] = ()  # tests, tools, docs: the checkout has them as they are
    notes: list[str] = field(default_factory=list, compare=False)


def needs_build(path: str) -> bool:
    pure = PurePosixPath(path)
    return (path.startswith(COMPILED_DIRS) or pure.name in COMPILED_FILES
            or (pure.suffix in COMPILED_SUFFIXES and not path.startswith(("test/", "docs/", ".github/", ".ci/"))))


def classify(paths: list[str]) -> Changes:
    python, compiled, other = [], [], []
    for path in paths:
        if needs_build(path):
            compiled.append(path)
        elif path.endswith((".py", ".pyi")) and path.startswith(PYTHON_PACKAGES):
            python.append(path)
        else:
            other.append(path)
    return Changes(tuple(python), tuple(compiled), tuple(other))
