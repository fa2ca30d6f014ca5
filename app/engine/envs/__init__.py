"""PyTorch builds on tap: releases, nightlies, and which one runs a commit.

- `provision`: a cached virtual environment per torch release (`scrub env add`), laid out by
  `app.torch_releases` (outside the engine so settings can use it);
- `variants`: a build's facts (`torch/version.py`: version, `git_version`, CUDA) and variant
  (`cpu`, `cu126`); which variants a worker may run;
- `index`: a PEP 503 index's torch wheels, and a remote wheel's `torch/version.py` by range
  requests; `history`: release tags, nightly source commits, distances and changed paths in
  the (blobless) mirror;
- `provider`: the plan for the commit under test (release, nearest nightly + Python overlay,
  build command, or `needs-build`); `build`: the plan made runnable (`nightly_env`: the
  pinned, cached environment and the binds of its compiled parts into the checkout).

Pure: no settings; the caller passes directories and options.
"""

from app.engine.envs.build import PreparedBuild, prepare
from app.engine.envs.provider import BuildPlan, BuildSources, plan_build
from app.engine.envs.provision import ProvisionError, provision
from app.torch_releases import EnvStore, ProvisionedEnv, parse_version, version_key

__all__ = ["BuildPlan", "BuildSources", "EnvStore", "PreparedBuild", "ProvisionedEnv", "ProvisionError",
           "parse_version", "plan_build", "prepare", "provision", "version_key"]
