"""Builds a culprit search runs: a nightly's environment, and a single commit's where it can be made.

Run on the repro side, with no GitHub: what a commit's build needs was read from GitHub on the
trusted side (`app.pipelines.kit.commit_range`) and comes with the run's state.

- `nightly_env(settings, nightly)`: the nightly's wheel, downloaded once into `<data>/wheels`,
  installed pinned into `<data>/envs/nightly/<version>/` (`app.engine.envs.nightly_env`).
- `commit_env(settings, base_env, base_commit, build, contents)`: the build of a commit (a
  `CommitBuild`), a descendant of the commit the nightly `base_env` was cut from (`base_commit`):
  * Python only: the nightly's environment with the commit's Python files laid over it
    (`app.engine.envs.overlay_env`), their texts from `contents`;
  * compiled sources too: the operator's build command (`SCRUB_BUILD_COMMAND`) makes a wheel
    of the commit (`app.engine.envs.build.prepare`); without one the commit cannot be built;
  * `build.cannot` (more files than GitHub lists, a file past what a job carries, ...): no build.
  `CannotBuild` says why, in words for the report ("could not be tested: ...").
- `git_version(env)`: the installed `torch/version.py`'s `git_version`, the commit a build was
  made from (for a nightly, a `nightly` branch commit: the trusted side follows it to main).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.engine.envs.build import prepare
from app.engine.envs.index import download
from app.engine.envs.nightlies import Nightly
from app.engine.envs.nightly_env import site_packages, wheel_env
from app.engine.envs.overlay_env import overlay_env
from app.engine.envs.provider import BuildPlan
from app.engine.envs.variants import build_from_version_py, installed_build
from app.pipelines.kit.narrowing import CommitBuild

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


def commit_env(settings: Any, base_env: Path, base_commit: str, build: CommitBuild, contents: dict[str, str],
               on_line=lambda line: None) -> Path:
    """The environment of `build`'s commit (see the module docstring); raises `CannotBuild`."""
    commit = build.sha
    if build.cannot:
        raise CannotBuild(build.cannot)
    if build.compiled:
        compiled = build.compiled
        if not settings.build_command:
            shown = ", ".join(compiled[:SHOWN]) + (" ..." if len(compiled) > SHOWN else "")
            raise CannotBuild(f"needs a build: {len(compiled)} compiled sources changed since the nightly "
                              f"({shown}) and no build command is configured (SCRUB_BUILD_COMMAND)")
        plan = BuildPlan("command", variant="cu126" if settings.gpu else "cpu", reason="culprit search")
        built = prepare(plan, commit=commit, envs_root=envs_root(settings), wheel_cache=wheel_cache(settings),
                        index_url=settings.torch_nightly_index_url, build_command=settings.build_command,
                        on_line=on_line)
        return Path(built.python).parent.parent
    missing = sorted({key for key in build.files.values() if key is not None and key not in contents})
    if missing:
        raise CannotBuild(f"the text of {len(missing)} changed Python files did not come with the job")
    overlay = {path: None if key is None else contents[key] for path, key in build.files.items()}
    return overlay_env(base_env, overlay, envs_root(settings) / "commits", f"{commit[:16]}-on-{base_commit[:8]}",
                       note={"commit": commit, "base_commit": base_commit})


__all__ = ["CannotBuild", "commit_env", "git_version", "nightly_env", "python_of"]
