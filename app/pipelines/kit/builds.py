"""Builds a culprit search runs: a nightly's environment, and a single commit's where it can be made.

- `nightly_env(settings, nightly)`: the nightly's wheel, downloaded once into `<data>/wheels`,
  installed pinned into `<data>/envs/nightly/<version>/` (`app.engine.envs.nightly_env`).
- `commit_env(settings, github, repo, base_env, base_commit, commit)`: the build of `commit`, a
  descendant of the nightly `base_env` was cut from (`base_commit`). What changed between them
  (`GET /compare`, `app.engine.envs.history.classify`) decides:
  * Python only: the nightly's environment with the commit's Python files laid over it
    (`app.engine.envs.overlay_env`), the files read at the commit through the contents API;
  * compiled sources too: the operator's build command (`SCRUB_BUILD_COMMAND`) makes a wheel
    of the commit (`app.engine.envs.build.prepare`); without one the commit cannot be built;
  * more files than GitHub lists (300): cannot tell what changed, so cannot be built.
  `CannotBuild` says why, in words for the report ("could not be tested: ...").

A build's torch source: `git_version(env)` reads the installed `torch/version.py`;
`source_commit(github, repo, git_version)` follows a nightly-branch commit to the main commit
its subject names (`app.engine.envs.nightlies.source_of_subject`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.engine.envs.build import prepare
from app.engine.envs.history import PYTHON_PACKAGES, classify
from app.engine.envs.index import download
from app.engine.envs.nightlies import Nightly, source_of_subject
from app.engine.envs.nightly_env import site_packages, wheel_env
from app.engine.envs.overlay_env import overlay_env
from app.engine.envs.provider import BuildPlan
from app.engine.envs.variants import build_from_version_py, installed_build

GITHUB_FILE_LIMIT = 300  # files GitHub's compare lists at most
SHOWN = 3  # compiled paths named in a reason


class CannotBuild(RuntimeError):
    """No build of a commit can be made here; the message says why."""


def envs_root(settings: Any) -> Path:
    return Path(settings.data_dir) / "envs"


def wheel_cache(settings: Any) -> Path:
    return Path(settings.data_dir) / "wheels"


def nightly_env(settings: Any, nightly: Nightly, on_line=lambda line: None) -> Path:
    """The environment of `nightly` (made once). Raises ProvisionError/OSError when it cannot be."""
    import zipfile

    path = download(nightly.wheel, wheel_cache(settings))
    with zipfile.ZipFile(path) as archive:
        build = build_from_version_py(archive.read("torch/version.py").decode("utf-8"))
    return wheel_env(path, build, envs_root(settings) / "nightly", index_url=settings.torch_nightly_index_url,
                     on_line=on_line)


def python_of(env: Path) -> str:
    return str(Path(env) / "bin" / "python")


def git_version(env: Path) -> str | None:
    build = installed_build(site_packages(Path(env)))
    return build.git_version if build else None


def source_commit(github: Any, repo: str, version: str) -> str:
    """The main-branch commit a build's `git_version` stands for (itself when it is not a
    `nightly` branch commit)."""
    commit = github.get_commit(repo, version)
    subject = str((commit.get("commit") or {}).get("message") or "").split("\n", 1)[0]
    return source_of_subject(subject) or str(commit.get("sha") or version)


def _shipped_python(path: str) -> bool:
    return path.endswith(".py") and path.startswith(PYTHON_PACKAGES)


def overlay_files(github: Any, repo: str, commit: str, files: list[dict]) -> dict[str, str | None]:
    """Site-packages path -> the commit's text (None: deleted) for each shipped Python file changed."""
    overlay: dict[str, str | None] = {}
    for entry in files:
        name, previous = str(entry.get("filename") or ""), entry.get("previous_filename")
        if previous and _shipped_python(str(previous)):
            overlay[str(previous)] = None
        if _shipped_python(name):
            overlay[name] = None if entry.get("status") == "removed" else github.file_at(repo, name, commit)
    return overlay


def commit_env(settings: Any, github: Any, repo: str, base_env: Path, base_commit: str, commit: str,
               on_line=lambda line: None) -> Path:
    """The environment of `commit`'s build (see the module docstring); raises `CannotBuild`."""
    compared = github.compare_commits(repo, base_commit, commit)
    if compared.get("status") not in ("ahead", "identical"):
        raise CannotBuild(f"{commit[:12]} does not descend from the nightly's source {base_commit[:12]}")
    files = list(compared.get("files") or [])
    if len(files) >= GITHUB_FILE_LIMIT:
        raise CannotBuild(f"{len(files)}+ files changed since the nightly: GitHub lists at most "
                          f"{GITHUB_FILE_LIMIT}, so what changed is not known")
    paths = [str(f.get("filename") or "") for f in files] + [str(f["previous_filename"]) for f in files
                                                             if f.get("previous_filename")]
    compiled = classify(paths).compiled
    if compiled:
        if not settings.build_command:
            shown = ", ".join(compiled[:SHOWN]) + (" ..." if len(compiled) > SHOWN else "")
            raise CannotBuild(f"needs a build: {len(compiled)} compiled sources changed since the nightly "
                              f"({shown}) and no build command is configured (SCRUB_BUILD_COMMAND)")
        plan = BuildPlan("command", variant="cu126" if settings.gpu else "cpu", reason="culprit search")
        built = prepare(plan, commit=commit, envs_root=envs_root(settings), wheel_cache=wheel_cache(settings),
                        index_url=settings.torch_nightly_index_url, build_command=settings.build_command,
                        on_line=on_line)
        return Path(built.python).parent.parent
    overlay = overlay_files(github, repo, commit, files)
    return overlay_env(base_env, overlay, envs_root(settings) / "commits", f"{commit[:16]}-on-{base_commit[:8]}",
                       note={"commit": commit, "base_commit": base_commit})


__all__ = ["CannotBuild", "commit_env", "git_version", "nightly_env", "overlay_files", "python_of",
           "source_commit"]
