"""Make the planned build runnable: the interpreter, the binds and the environment of its runs.

`prepare(plan, ...)` turns a `BuildPlan` (`app.engine.envs.provider`) into a `PreparedBuild`:

- interpreter: nothing to prepare (the worker's own interpreter runs the tests);
- release: the provisioned release environment;
- nightly: the wheel downloaded once into the wheel cache and installed pinned into its cached
  environment (`nightly_env.wheel_env`);
- command: the operator's build command (trusted, on the host, never given the checkout's
  code to run) is asked for a wheel of the commit in `$SCRUBBOT_BUILD_OUT`
  (`$SCRUBBOT_BUILD_COMMIT`, `$SCRUBBOT_BUILD_VARIANT`); the wheel must carry that commit as
  its `git_version`, then it is installed like a nightly.

For a PyTorch checkout the build's compiled parts are bound into the checkout's `torch/` and
`PYTHONPATH` names the checkout, so `import torch` runs the checkout's own Python over the
build's libraries from any working directory (what `tools/nightly.py`'s `torch.pth` does).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from app.engine.envs.index import Wheel, download
from app.engine.envs.nightly_env import MARKER, compiled_binds, site_packages, wheel_env
from app.engine.envs.provider import BuildPlan
from app.engine.envs.provision import ProvisionError
from app.engine.envs.variants import build_from_version_py
from app.engine.sandbox.layer import WORK

BUILD_COMMAND_TIMEOUT_S = 3600.0


@dataclass
class PreparedBuild:
    plan: BuildPlan
    python: str = ""  # "" = the worker's own interpreter
    binds: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)

    @property
    def runnable(self) -> bool:
        return self.plan.runnable


def _placed(plan: BuildPlan, env_dir: Path) -> PreparedBuild:
    python = str(Path(env_dir) / "bin" / "python")
    return PreparedBuild(plan, python, compiled_binds(site_packages(env_dir)), {"PYTHONPATH": WORK})


def _wheel_of(path: Path) -> tuple[Path, str]:
    import zipfile

    with zipfile.ZipFile(path) as archive:
        return path, archive.read("torch/version.py").decode("utf-8")


def _run_build_command(plan: BuildPlan, command: str, commit: str, out: Path) -> Path:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRUB_")}
    env |= {"SCRUBBOT_BUILD_COMMIT": commit, "SCRUBBOT_BUILD_VARIANT": plan.variant or "cpu",
            "SCRUBBOT_BUILD_OUT": str(out)}
    done = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True,
                          timeout=BUILD_COMMAND_TIMEOUT_S, stdin=subprocess.DEVNULL, cwd=out)
    wheels = sorted(out.glob("torch-*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        raise ProvisionError(f"the build command (exit {done.returncode}) left {len(wheels)} torch wheels in "
                             f"$SCRUBBOT_BUILD_OUT, not one: {(done.stdout + done.stderr)[-800:]}")
    return wheels[0]


def _built_before(root: Path, commit: str) -> Path | None:
    """The complete environment the build command made of `commit` earlier, if there is one."""
    for marker in sorted(Path(root).glob(f"*/{MARKER}")):
        try:
            if json.loads(marker.read_text()).get("git_version") == commit:
                return marker.parent
        except (OSError, ValueError):
            continue
    return None


def prepare(plan: BuildPlan, *, commit: str, envs_root: Path, wheel_cache: Path, index_url: str = "",
            build_command: str = "", on_line=lambda line: None) -> PreparedBuild:
    """The interpreter, binds and environment that run `plan` (see the module docstring)."""
    if plan.outcome in ("interpreter", "needs-build"):
        return PreparedBuild(plan)
    if plan.outcome == "release":
        return _placed(plan, Path(plan.python).parent.parent)
    if plan.outcome == "nightly":
        wheel = Wheel(**plan.wheel)
        path = download(wheel, wheel_cache)
        build = build_from_version_py(_wheel_of(path)[1])
        return _placed(plan, wheel_env(path, build, envs_root / "nightly", index_url=index_url, on_line=on_line))
    built = _built_before(envs_root / "built", commit) if plan.git_version == commit else None
    if built is not None:  # made by an earlier stage of this run (or another run of the commit)
        return _placed(plan, built)
    with tempfile.TemporaryDirectory(prefix="scrub-build-") as out:
        path, version_py = _wheel_of(_run_build_command(plan, build_command, commit, Path(out)))
        build = build_from_version_py(version_py)
        if build.git_version != commit:
            raise ProvisionError(f"the build command made torch {build.version} from {build.git_version[:12]}, "
                                 f"not from {commit[:12]}")
        env_dir = wheel_env(path, build, envs_root / "built", index_url=index_url, on_line=on_line)
    plan.version, plan.git_version, plan.variant, plan.base = build.version, build.git_version, build.variant, commit
    plan.distance, plan.overlay = 0, []
    return _placed(plan, env_dir)
